package wal

// ValidPrefix returns the length of the longest prefix of a segment's
// bytes that is whole, valid records. A backup copies a segment while it
// is being appended to, so its copy may show a record written after the
// reader passed an earlier one's (then zero) place; cutting the copy here
// keeps only records that were all there, as a torn tail is cut.
func ValidPrefix(data []byte) int64 { return scan(data).end }
