// Package migrating holds, in its tests, the troupe side of every code
// pair in docs/migrating.md, compiled and run, and the check that the
// guide shows them as they are.
package migrating
