#!/usr/bin/env bash
# Compares the working tree's agents binary with a base revision's, on one
# machine, in turns: make bench-compare BASE=<rev>. The base is built as
# make build builds (static, trimmed, stripped, with the working tree's
# web app inside, so the binaries differ in their Go code only) into
# bin/base-<commit>/, once per commit. loadgen then runs each prompts
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

commit=$(git rev-parse --verify --quiet "$BASE^{commit}") || {
  echo "bench-compare: $BASE is not a revision of this repository" >&2
  exit 2
}
short=${commit:0:12}
base_bin="$BIN/base-$short/agents"
build() { CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' "$@"; }

if [[ ! -x $base_bin ]]; then
  tree=$(mktemp -d)
  trap 'git worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
  git worktree add --detach --quiet "$tree" "$commit"
  if [[ -d $tree/$WEBUI_DIST ]]; then
    find "$tree/$WEBUI_DIST" -mindepth 1 ! -name .gitignore -delete
    cp -R "$WEBUI_DIST/." "$tree/$WEBUI_DIST/"
  fi
  mkdir -p "$(dirname "$base_bin")"
  echo "== building $BASE ($short) as make build does" >&2
  (cd "$tree" && build -o "$OLDPWD/$base_bin" ./backend/cmd/agents)
fi

echo "== building the working tree" >&2
mkdir -p "$BIN"
build -o "$BIN/agents" ./backend/cmd/agents
go build -o "$BIN/loadgen" ./tools/cmd/loadgen
echo "== $BIN/agents against $base_bin ($BASE), in turns" >&2
exec "$BIN/loadgen" -agents-bin "$BIN/agents" -compare "$base_bin" \
  -scenario "$SCENARIOS" -concurrency "$CONCURRENCY" -repeat "$REPEAT" ${LOADGEN_FLAGS:-}
