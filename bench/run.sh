#!/usr/bin/env bash
# Runs troupe's benchmarks beside their peers and prints the ratio table and
# the issue's targets (bench/cmd/benchtab).
#
#   bench/run.sh [rounds] [benchmark regexp]
#
# 1. Rounds (default 10) of the timed benchmarks, Hop, Stack, Slow and Stage
#    unless a regexp is given, each for BENCHTIME (default 1s) per variant.
#    Rounds are interleaved: each round runs every variant once, so the noise
#    of this shared machine hits all variants alike; the table shows medians.
# 2. Then SCENARIO_ROUNDS (default 3) rounds of the fixed scenarios, Overload
#    and Pipelines (-benchtime 1x: each iteration is the whole scenario;
#    about 35 s a round). Skipped when a regexp is given, unless SCENARIOS=1;
#    SCENARIOS=0 always skips them.
#
# The raw `go test -bench` output, for benchstat, goes to
# bench/results/raw.txt, the table also to bench/results/table.txt. The default run takes about 10 minutes on the
# project's 2-core machine; for steadier figures run more rounds, longer:
#   BENCHTIME=2s bench/run.sh 15
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-10}
pattern=${2:-'^Benchmark(Hop|Stack|Slow|Stage)$'}
benchtime=${BENCHTIME:-1s}
scenarios=${SCENARIOS:-}
if [ -z "$scenarios" ]; then
  if [ $# -ge 2 ]; then scenarios=0; else scenarios=1; fi
fi
mkdir -p results
: > results/raw.txt
go test -c -o results/bench.test .
start=$SECONDS
failed=0
for i in $(seq "$rounds"); do
  echo "round $i/$rounds ($((SECONDS - start)) s)" >&2
  ./results/bench.test -test.run '^$' -test.bench "$pattern" -test.benchmem \
    -test.benchtime "$benchtime" -test.timeout 30m >> results/raw.txt || failed=1
done
if [ "$scenarios" = 1 ]; then
  srounds=${SCENARIO_ROUNDS:-3}
  for i in $(seq "$srounds"); do
    echo "scenarios (Overload, Pipelines) $i/$srounds ($((SECONDS - start)) s)" >&2
    ./results/bench.test -test.run '^$' -test.bench '^Benchmark(Overload|Pipelines)$' \
      -test.benchmem -test.benchtime 1x -test.timeout 30m >> results/raw.txt || failed=1
  done
fi
echo "done in $((SECONDS - start)) s" >&2
# benchtab also lists any FAIL lines of the raw output, and then exits 1.
go run ./cmd/benchtab -ref chanchain,direct,chan -mref 100k < results/raw.txt | tee results/table.txt
exit "$failed"
