#!/usr/bin/env bash
# Prints exactly BYTES bytes of "a" on stdout, or on stderr then fails.
case "${1:-}" in
  describe)
    cat <<'JSON'
{"slug": "big_output", "description": "prints many bytes", "args": [
  {"name": "bytes", "description": "how many", "type": "int", "backing_type": "integer", "arity": "single", "mode": "positional"},
  {"name": "to-stderr", "description": "print on stderr and fail", "type": "bool", "backing_type": "boolean", "arity": "optional", "mode": "dashdashequal"}
]}
JSON
    ;;
  run)
    n=$2
    chunk=$(printf 'a%.0s' {1..1024})
    out() {
      local left=$n
      while (( left >= 1024 )); do printf '%s' "$chunk"; left=$((left - 1024)); done
      printf '%s' "${chunk:0:left}"
    }
    if [[ "${3:-}" == "--to-stderr=true" ]]; then
      out >&2
      exit 1
    fi
    out
    ;;
esac
