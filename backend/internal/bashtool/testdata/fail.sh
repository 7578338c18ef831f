#!/usr/bin/env bash
# Fails with exit status 3, saying why on both streams.
case "${1:-}" in
  describe)
    echo '{"slug": "fail", "description": "always fails", "args": []}'
    ;;
  run)
    echo "partial result"
    echo "something broke: disk on fire" >&2
    exit 3
    ;;
esac
