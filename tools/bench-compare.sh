#!/usr/bin/env bash
# Compares the working tree's agents binary (or REV's) with a base
# revision's, on one machine, in turns: make bench-compare BASE=<rev>
# [REV=<rev>]. The base is built as
# make build builds (static, trimmed, stripped, with the working tree's
# web app inside, so the binaries differ in their Go code only) into
# bin/rev-<commit>/, once per commit. loadgen then runs each prompts
# row and each start-up against both binaries in turns on the same
# offline model and prints both figures and their ratio. BENCHMARKS.md
# reports performance changes this way, against the base it names.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${BASE:?name the base revision: make bench-compare BASE=<rev>}
BIN=${BIN:-bin}
SCENARIOS=${SCENARIOS:-prompts,boot}
CONCURRENCY=${CONCURRENCY:-1,16}
REPEAT=${REPEAT:-3}
WEBUI_DIST=backend/internal/webui/dist

REV=${REV:-}
build() { CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' "$@"; }
# built REV prints the path of REV's binary, built once per commit.
built() {
  local commit short out tree
  commit=$(git rev-parse --verify --quiet "$1^{commit}") || {
    echo "bench-compare: $1 is not a revision of this repository" >&2
    return 2
  }
  short=${commit:0:12}
  out="$BIN/rev-$short/agents"
  if [[ ! -x $out ]]; then
    tree=$(mktemp -d)
    # built runs in a subshell of its own, whose trap removes the tree
    # (named now: the function's locals are gone when the trap runs).
    # shellcheck disable=SC2064
    trap "git worktree remove --force '$tree' >/dev/null 2>&1 || rm -rf '$tree'" EXIT
    git worktree add --detach --quiet "$tree" "$commit"
    if [[ -d $tree/$WEBUI_DIST ]]; then
      find "$tree/$WEBUI_DIST" -mindepth 1 ! -name .gitignore -delete
      cp -R "$WEBUI_DIST/." "$tree/$WEBUI_DIST/"
    fi
    mkdir -p "$(dirname "$out")"
    echo "== building $1 ($short) as make build does" >&2
    (cd "$tree" && build -o "$OLDPWD/$out" ./backend/cmd/agents) >&2
  fi
  echo "$out"
}

base_bin=$(built "$BASE")
mkdir -p "$BIN"
if [[ -n $REV ]]; then
  bin=$(built "$REV")
else
  echo "== building the working tree" >&2
  bin="$BIN/agents"
  build -o "$bin" ./backend/cmd/agents
fi
go build -o "$BIN/loadgen" ./tools/cmd/loadgen
echo "== $bin against $base_bin ($BASE), in turns" >&2
"$BIN/loadgen" -agents-bin "$bin" -compare "$base_bin" \
  -scenario "$SCENARIOS" -concurrency "$CONCURRENCY" -repeat "$REPEAT" ${LOADGEN_FLAGS:-}
