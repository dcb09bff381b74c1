#!/usr/bin/env bash
# A/B: the benchmarks of a base commit (A) against the working tree's (B),
# in interleaved rounds, compared by bench/cmd/abtab.
#
#   bench/ab.sh BASE [rounds] [benchmark regexp]
#
# Builds both bench binaries (A in a temporary git worktree, with
# GOWORK=off: bench/go.mod points at the core in its own tree), then runs
# the rounds (default 8), A first in odd rounds and B first in even ones,
# BENCHTIME (default 300ms) per benchmark. The raw outputs go to
# bench/results/ab-a.txt and ab-b.txt, the table to results/ab.txt. Quote
# the last two columns, the change of the ratio to a peer measured by the
# same binary in the same round (of the medians, and paired round by
# round): on a shared machine the raw figures drift by 10 % between
# rounds, the peers with them.
#   bench/ab.sh 2573c07 12 '^Benchmark(Stage|Stack)$'
set -euo pipefail
cd "$(dirname "$0")"
base=${1:?usage: bench/ab.sh BASE [rounds] [regexp]}
rounds=${2:-8}
pattern=${3:-'^Benchmark(Hop|Stage|Stack)$'}
benchtime=${BENCHTIME:-300ms}
tmp=$(mktemp -d)
cleanup() {
  git -C .. worktree remove --force "$tmp/base" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
git -C .. worktree add --detach "$tmp/base" "$base" >/dev/null
(cd "$tmp/base/bench" && GOWORK=off go test -c -o "$tmp/a.test" .)
go test -c -o "$tmp/b.test" .
mkdir -p results
: > results/ab-a.txt
: > results/ab-b.txt
for i in $(seq "$rounds"); do
  echo "round $i/$rounds" >&2
  if ((i % 2)); then order="a b"; else order="b a"; fi
  for w in $order; do
    "$tmp/$w.test" -test.run '^$' -test.bench "$pattern" -test.benchmem \
      -test.benchtime "$benchtime" -test.timeout 30m >> "results/ab-$w.txt"
  done
done
go run ./cmd/abtab -a results/ab-a.txt -b results/ab-b.txt | tee results/ab.txt
