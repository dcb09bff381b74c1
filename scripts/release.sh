#!/usr/bin/env bash
# Releases troupe at one version, as Go multi-module repositories do:
#
#   scripts/release.sh v0.1.0      # set the requirements, commit, check, tag
#   scripts/release.sh -n v0.1.0   # only set the requirements
#
# 1. Every module of the repository that requires a published module (the
#    core, troupegrpc, troupeotel, redisquota) is made to require it at
#    VERSION. The replace directives stay: they serve development here and
#    a user's build ignores them.
# 2. The change, if any, is committed.
# 3. The consumer check (scripts/consumer-check.sh) builds a module outside
#    the repository against the modules at that commit; then the commit is
#    tagged VERSION, troupegrpc/VERSION, troupeotel/VERSION and
#    redisquota/VERSION.
#    Publishing is pushing those tags: git push origin VERSION troupegrpc/VERSION ...
set -euo pipefail
dry=false
if [ "${1:-}" = "-n" ]; then dry=true; shift; fi
version=${1:-}
if ! [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || [ "$version" = v0.0.0 ]; then
  echo "usage: $0 [-n] vX.Y.Z (a release version, not v0.0.0)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
core=github.com/troupe-go/troupe
published=("$core" "$core/troupegrpc" "$core/troupeotel" "$core/redisquota")
tags=("$version" "troupegrpc/$version" "troupeotel/$version" "redisquota/$version")

if ! $dry && [ -n "$(git status --porcelain)" ]; then
  echo "the work tree has changes: commit or stash them first" >&2
  exit 1
fi
for tag in "${tags[@]}"; do
  if git rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
    echo "tag $tag exists already" >&2
    exit 1
  fi
done

for gomod in $(git ls-files '*go.mod'); do
  [ "$gomod" = go.mod ] && continue
  for path in "${published[@]}"; do
    # a require line (in a block or on its own), not the module or a replace line
    if grep -Eq "^(require[[:space:]]+)?[[:space:]]*${path//./\\.}[[:space:]]+v[^[:space:]]+([[:space:]]|$)" "$gomod"; then
      (cd "$(dirname "$gomod")" && go mod edit -require="$path@$version")
    fi
  done
done
git --no-pager diff --stat
$dry && exit 0

if [ -n "$(git status --porcelain)" ]; then
  git commit -q -am "release $version: every module requires the published modules at $version"
fi
# The check builds from HEAD: the commit just made.
scripts/consumer-check.sh
for tag in "${tags[@]}"; do
  git tag -a "$tag" -m "troupe $version"
done
echo "tagged $(git rev-parse --short HEAD): ${tags[*]}"
echo "publish: git push origin ${tags[*]}"
