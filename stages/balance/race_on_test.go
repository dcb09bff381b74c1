//go:build race

package balance_test

// raceEnabled: the race detector drops sync.Pool items at random, so
// allocation counts mean nothing under it.
const raceEnabled = true
