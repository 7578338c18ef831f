#!/usr/bin/env bash
# Test tool: says what it would write where.
set -euo pipefail
case "${1:-}" in
  describe)
    echo '{"slug": "write-file", "description": "Writes a file.", "args": [{"name": "filepath", "description": "the file", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"}, {"name": "content", "description": "what to write", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"}]}'
    ;;
  run)
    echo "wrote ${#3} characters to $2"
    ;;
esac
