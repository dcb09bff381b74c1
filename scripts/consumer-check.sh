#!/usr/bin/env bash
# A user's build, outside the repository: a module of its own (GOWORK=off,
# an empty module cache of its own) takes the core, troupegrpc, troupeotel
# and redisquota at the version the siblings require, from a file proxy made
# from this repository's HEAD (tools/modproxy), and everything else from
# the usual proxy. It vets, builds and runs scripts/testdata/consumer (a
# call through each integration) and the README's quick start
# (examples/quickstart/main.go as it is).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

version=$(cd "$root/tools" && GOWORK=off go run ./modproxy -repo "$root" -out "$work/proxy")
echo "consumer check: troupe $version from $(git -C "$root" rev-parse --short HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  echo "consumer check: note: uncommitted changes are not in the proxy (it is made from HEAD)"
fi

proxy="file://$work/proxy"
# The machine's own module cache, read as a proxy, spares downloads the
# usual proxy would serve just the same; it holds no troupe module.
cache=$(go env GOMODCACHE)/cache/download
[ -d "$cache" ] && proxy="$proxy,file://$cache"
export GOWORK=off GOFLAGS="-mod=mod -trimpath" GOMODCACHE="$work/modcache"
export GOPROXY="$proxy,$(go env GOPROXY)" GONOSUMDB=github.com/troupe-go/troupe

mkdir -p "$work/consumer/quickstart"
cp "$root/scripts/testdata/consumer/main.go" "$work/consumer/main.go"
cp "$root/examples/quickstart/main.go" "$work/consumer/quickstart/main.go"
cd "$work/consumer"
go mod init example.com/consumer 2>/dev/null
core=github.com/troupe-go/troupe
if ! go get "$core@$version" "$core/troupegrpc@$version" "$core/troupeotel@$version" "$core/redisquota@$version" 2>"$work/get.log"; then
  cat "$work/get.log" >&2
  exit 1
fi
go vet ./...
go build -o "$work/bin/" ./...
"$work/bin/consumer"
"$work/bin/quickstart"
go list -m "$core" "$core/troupegrpc" "$core/troupeotel" "$core/redisquota"
