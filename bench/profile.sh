#!/usr/bin/env bash
# Captures CPU profiles of the troupe stack (BenchmarkStack/.../troupe), one
# sequential and one with 64 callers, and prints the top entries of each
# (also saved in bench/results/profile.txt).
#
#   bench/profile.sh [benchtime] [nodecount]     (defaults: 5s, 15)
#
# Profiles go to bench/results/cpu-seq.prof and cpu-par64.prof, with the
# test binary pprof needs beside them; explore further with e.g.
#   go tool pprof -http :8080 bench/results/bench.test bench/results/cpu-par64.prof
set -euo pipefail
cd "$(dirname "$0")"
benchtime=${1:-5s}
nodes=${2:-15}
mkdir -p results
go test -c -o results/bench.test .
exec > >(tee results/profile.txt)
for mode in seq par64; do
  ./results/bench.test -test.run '^$' -test.bench "^BenchmarkStack/$mode/troupe\$" -test.benchmem \
    -test.benchtime "$benchtime" -test.cpuprofile "results/cpu-$mode.prof" | grep '^Benchmark'
  echo "== top $nodes, Stack/$mode/troupe (flat)"
  go tool pprof -top -nodecount "$nodes" results/bench.test "results/cpu-$mode.prof" 2>/dev/null | sed -n '/flat%/,$p'
  echo "== top $nodes, Stack/$mode/troupe (cumulative)"
  go tool pprof -top -cum -nodecount "$nodes" results/bench.test "results/cpu-$mode.prof" 2>/dev/null | sed -n '/flat%/,$p'
done
