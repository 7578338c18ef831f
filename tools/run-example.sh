#!/usr/bin/env bash
# Serves the example agents, or those of AGENTS_CONFIG (a config file, as
# agents --config takes). Without OPENAI_API_KEY the agents talk to the
# offline model (tools/fakellm) scripted by RULES (default
# examples/offline-rules.json), so the demo works with no account and no
# network. The demo keeps its data
# (database, tool records) in DEMO_DIR, never in the user's own data
# directory: its sessions do not mix with the user's, and it cannot touch
# the tools a real server of the user's is running. The server's and the
# offline model's logs go to files in DEMO_DIR, so the summary printed
# once the server is ready stays readable.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
PORT=${PORT:-7420}
OFFLINE_PORT=${OFFLINE_PORT:-7421}
DEMO_DIR=${DEMO_DIR:-.demo}
AGENTS_CONFIG=${AGENTS_CONFIG:-}
RULES=${RULES:-examples/offline-rules.json}
mkdir -p "$DEMO_DIR"
DEMO_DIR=$(cd "$DEMO_DIR" && pwd)
BIN=$(cd "$BIN" && pwd)
url="http://127.0.0.1:$PORT"
server_log="$DEMO_DIR/server.log"
model_log="$DEMO_DIR/offline-model.log"

pids=()
stop() {
  # serve stops gracefully on SIGTERM; the offline model just ends.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT

args=(serve --port "$PORT")
config=()
if [ -n "$AGENTS_CONFIG" ]; then
  config=(--config "$AGENTS_CONFIG")
  args+=("${config[@]}")
else
  # The example agents' programs are offered to agents made in the
  # clients too (the web app's agent form ticks them): the demo lets a
  # stored agent run them. A config of the user's says its own.
  args+=(--stored-agent-tool-dirs examples/agents)
fi
if [ -z "${OPENAI_API_KEY:-}" ]; then
  "$BIN/fakellm" --check --rules "$RULES" >/dev/null
  "$BIN/fakellm" --rules "$RULES" --addr "127.0.0.1:$OFFLINE_PORT" >/dev/null 2>"$model_log" &
  pids+=($!)
  for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$OFFLINE_PORT/v1/models" >/dev/null && break
    sleep 0.1
  done
  args+=(--offline-model "http://127.0.0.1:$OFFLINE_PORT/v1")
fi

XDG_DATA_HOME="$DEMO_DIR" "$BIN/agents" "${args[@]}" --log-format text 2>"$server_log" &
serve=$!
pids+=("$serve")
for _ in $(seq 100); do
  curl -sf "$url/readyz" >/dev/null && break
  if ! kill -0 "$serve" 2>/dev/null; then
    echo "the server did not start; the end of its log ($server_log):" >&2
    tail -n 20 "$server_log" >&2
    exit 1
  fi
  sleep 0.1
done

# Which model each agent really talks to, as the server resolved it: a
# key from the environment or from the keys file means OpenAI, no key the
# offline model.
{
  echo
  echo "demo data: $DEMO_DIR (not your own database; DEMO_DIR= moves it)"
  if [ -z "${OPENAI_API_KEY:-}" ]; then
    echo "no OPENAI_API_KEY: agents without a key use the offline model on port $OFFLINE_PORT, scripted by $RULES (see docs/models.md for a real one)"
  else
    echo "OPENAI_API_KEY is set: the example agents use OpenAI"
  fi
  "$BIN/agents" agents ls --attach "$url"
  echo
  echo "the agents command: $BIN/agents; put it on your PATH with"
  echo "  export PATH=\"$BIN:\$PATH\"      (or make install: /usr/local/bin, PREFIX= for another)"
  echo "try: $BIN/agents run --attach $url -a assistant \"What time is it?\""
  echo "the server's log: $server_log (tail -f it to watch the requests)"
  echo
  echo "the web app: $url/ (Ctrl-C stops the server)"
} >&2
wait "$serve"
