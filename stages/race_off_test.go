//go:build !race

package stages_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
