package zk

import "strconv"

var createModeNames = [...]string{
	Persistent: "Persistent", Ephemeral: "Ephemeral", PersistentSequential: "PersistentSequential",
	EphemeralSequential: "EphemeralSequential", Container: "Container",
	PersistentWithTTL: "PersistentWithTTL", PersistentSequentialWithTTL: "PersistentSequentialWithTTL",
}

// String returns the mode's name as Apache's CreateMode spells it in
// CamelCase ("EphemeralSequential").
func (m CreateMode) String() string {
	if m >= 0 && int(m) < len(createModeNames) {
		return createModeNames[m]
	}
	return "CreateMode(" + strconv.Itoa(int(m)) + ")"
}

// String returns "Persistent" or "PersistentRecursive" (AddWatchMode).
func (m WatchMode) String() string {
	switch m {
	case WatchPersistent:
		return "Persistent"
	case WatchPersistentRecursive:
		return "PersistentRecursive"
	}
	return "WatchMode(" + strconv.Itoa(int(m)) + ")"
}

// String returns "Children", "Data" or "Any" (Watcher.WatcherType).
func (t WatcherType) String() string {
	switch t {
	case WatcherChildren:
		return "Children"
	case WatcherData:
		return "Data"
	case WatcherAny:
		return "Any"
	}
	return "WatcherType(" + strconv.Itoa(int(t)) + ")"
}
