#!/usr/bin/env bash
# Sleeps half a second, then succeeds.
case "${1:-}" in
  describe)
    echo '{"slug": "sleep_ok", "description": "sleeps, then prints ok", "args": []}'
    ;;
  run)
    sleep 0.5
    echo ok
    ;;
esac
