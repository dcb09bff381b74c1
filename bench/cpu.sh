#!/usr/bin/env bash
# Runs benchmarks at one core and at two in the same rounds (go test's -cpu
# flag sets GOMAXPROCS) and prints benchtab's tables, a group per setting.
#
#   bench/cpu.sh [rounds] [benchmark regexp] [cpu list]
#
# Defaults: 5 rounds of Stack and Buffers at -cpu 1,2, BENCHTIME (default
# 400ms) per variant and setting. A round runs each variant at every
# setting, one after the other, then the next variant. go test names a
# result "-2" at GOMAXPROCS 2 and gives none at 1, which benchtab would
# merge: the names are rewritten so that each setting is a group of its own
# (Stack/seq/cpu1/troupe, Stack/seq/cpu2/troupe). Ratios are to chanchain
# (direct, chan) in the same round, ns/op and reported metrics (cpu-ns/op)
# alike. Raw output: bench/results/cpu-raw.txt; table:
# bench/results/cpu-table.txt.
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}
pattern=${2:-'^Benchmark(Stack|Buffers)$'}
cpus=${3:-1,2}
benchtime=${BENCHTIME:-400ms}
mkdir -p results
: > results/cpu-raw.txt
go test -c -o results/cpu.test .
failed=0
for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  ./results/cpu.test -test.run '^$' -test.bench "$pattern" -test.benchmem \
    -test.benchtime "$benchtime" -test.cpu "$cpus" -test.timeout 30m >> results/cpu-raw.txt || failed=1
done
awk '/^Benchmark/ {
  n = $1; p = 1
  if (match(n, /-[0-9]+$/)) { p = substr(n, RSTART + 1); n = substr(n, 1, RSTART - 1) }
  k = match(n, /\/[^\/]+$/)
  if (k) { n = substr(n, 1, k - 1) "/cpu" p substr(n, k) } else { n = n "/cpu" p }
  $1 = n
} { print }' results/cpu-raw.txt |
  go run ./cmd/benchtab -ref chanchain,direct,chan -mref chanchain -targets=false | tee results/cpu-table.txt
exit "$failed"
