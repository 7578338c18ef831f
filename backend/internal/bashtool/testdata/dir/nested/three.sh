#!/usr/bin/env bash
# In a subdirectory: a directory toolbox does not recurse.
case "${1:-}" in
  describe) echo '{"slug": "three", "description": "nested tool", "args": []}' ;;
  run) echo three ;;
esac
