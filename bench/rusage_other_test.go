//go:build !linux && !darwin

package bench

// processCPU reports false: getrusage is read on Linux and macOS only, and
// elsewhere the benchmarks report no cpu-ns/op.
func processCPU() (int64, bool) { return 0, false }
