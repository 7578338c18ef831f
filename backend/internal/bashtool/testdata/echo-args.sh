#!/usr/bin/env bash
# Reports exactly what it received, as JSON: argv, stdin, working directory
# and its environment: the variables the tests look at, and the names of all
# exported variables.
set -euo pipefail

json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  printf '"%s"' "$s"
}

case "${1:-}" in
  describe)
    cat <<'JSON'
{
  "slug": "echo_args",
  "description": "Echoes its arguments, stdin & environment as JSON <for tests>.",
  "args": [
    {"name": "first", "description": "a positional word", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"},
    {"name": "flag", "description": "a --flag value pair", "type": "string", "backing_type": "string", "arity": "optional", "mode": "dashdashspace"},
    {"name": "eq", "description": "an --eq=value word", "type": "string", "backing_type": "string", "arity": "optional", "mode": "dashdashequal"},
    {"name": "count", "description": "an integer", "type": "count", "backing_type": "integer", "arity": "optional", "mode": "dashdashequal"},
    {"name": "ratio", "description": "a number", "type": "ratio", "backing_type": "number", "arity": "optional", "mode": "dashdashspace"},
    {"name": "verbose", "description": "a boolean", "type": "bool", "backing_type": "boolean", "arity": "optional", "mode": "dashdashequal"},
    {"name": "body", "description": "text on stdin", "type": "text", "backing_type": "string", "arity": "optional", "mode": "stdin"},
    {"name": "api-token", "description": "a secret in the environment", "type": "token", "backing_type": "string", "arity": "optional", "mode": "env"},
    {"name": "last", "description": "another positional word", "type": "string", "backing_type": "string", "arity": "optional", "mode": "positional"}
  ]
}
JSON
    ;;
  run)
    stdin=$(cat; printf x)
    stdin=${stdin%x}
    printf '{"argv":['
    sep=""
    for a in "$@"; do
      printf '%s' "$sep"
      json_string "$a"
      sep=","
    done
    printf '],"stdin":'
    json_string "$stdin"
    printf ',"cwd":'
    json_string "$PWD"
    printf ',"env":{'
    sep=""
    for name in AGENT_SESSION_ID AGENT_SLUG AGENT_TOOL_CALL_ID API_TOKEN EXTRA_VAR PASSED_VAR; do
      printf '%s"%s":' "$sep" "$name"
      if [[ -v $name ]]; then json_string "${!name}"; else printf 'null'; fi
      sep=","
    done
    printf '},"exported":['
    sep=""
    for name in $(compgen -e); do
      printf '%s"%s"' "$sep" "$name"
      sep=","
    done
    printf ']}\n'
    ;;
  *)
    echo "usage: $0 describe|run ARGS..." >&2
    exit 2
    ;;
esac
