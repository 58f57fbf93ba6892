//go:build simmutate

package wal

// mutTornAlways plants a defect for internal/sim's TestMutations: every bad
// last record is taken as a torn tail, bit rot in fsynced records included
// (the rule before v1's torn heuristic and v2's header checksum): both
// frames' torn rules honour it.
var mutTornAlways bool

// SetTornAlwaysMutation turns the planted defect on or off (build tag
// simmutate only).
func SetTornAlwaysMutation(on bool) { mutTornAlways = on }
