#!/usr/bin/env bash
# Test tool: says which file it would read.
set -euo pipefail
case "${1:-}" in
  describe)
    echo '{"slug": "read-file", "description": "Reads a file.", "args": [{"name": "filepath", "description": "the file", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"}]}'
    ;;
  run)
    echo "read: $2"
    ;;
esac
