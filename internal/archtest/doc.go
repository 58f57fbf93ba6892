// Package archtest holds tests of the module's structure: which packages
// may import what (shared/DESIGN.md, "Packages"). It has no code of its own.
package archtest
