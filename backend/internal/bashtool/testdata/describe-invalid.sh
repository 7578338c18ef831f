#!/usr/bin/env bash
# Well-formed JSON that breaks the protocol in several ways at once.
case "${1:-}" in
  describe)
    cat <<'JSON'
{"description": "no slug", "args": [
  {"name": "a", "description": "", "type": "string", "backing_type": "string", "arity": "many", "mode": "positional"},
  {"name": "b", "description": "", "type": "string", "backing_type": "object", "arity": "single", "mode": "shell"},
  {"name": "c", "description": ""}
]}
JSON
    ;;
esac
