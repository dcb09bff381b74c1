//go:build !race

package balance_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
