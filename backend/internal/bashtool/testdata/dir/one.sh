#!/usr/bin/env bash
case "${1:-}" in
  describe) echo '{"slug": "one", "description": "first tool", "args": []}' ;;
  run) echo one ;;
esac
