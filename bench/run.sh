#!/usr/bin/env bash
# Runs troupe's benchmarks beside their peers and prints the ratio table.
# Rounds are interleaved: each round runs every variant once, so the noise of
# this shared machine hits all variants alike. Raw `go test -bench` output
# (for benchstat) goes to bench/results/raw.txt.
#
#   bench/run.sh [rounds] [benchmark regexp]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-10}
pattern=${2:-.}
mkdir -p results
: > results/raw.txt
go test -c -o results/bench.test .
for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  ./results/bench.test -test.run '^$' -test.bench "$pattern" -test.benchmem -test.benchtime 1s >> results/raw.txt
done
go run ./cmd/benchtab -ref chan,chanchain < results/raw.txt
