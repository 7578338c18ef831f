#!/usr/bin/env bash
# Serves the example agents. Without OPENAI_API_KEY the agents talk to the
# offline model (tools/fakellm) scripted by examples/offline-rules.json, so
# the demo works with no account and no network.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
PORT=${PORT:-7420}
OFFLINE_PORT=${OFFLINE_PORT:-7421}

args=(serve --port "$PORT")
if [ -z "${OPENAI_API_KEY:-}" ]; then
  "$BIN/fakellm" --rules examples/offline-rules.json --addr "127.0.0.1:$OFFLINE_PORT" >/dev/null &
  fakellm_pid=$!
  trap 'kill "$fakellm_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$OFFLINE_PORT/v1/models" >/dev/null && break
    sleep 0.1
  done
  echo "no OPENAI_API_KEY: the example agents use the offline model on port $OFFLINE_PORT" >&2
  args+=(--offline-model "http://127.0.0.1:$OFFLINE_PORT/v1")
fi
"$BIN/agents" "${args[@]}"
