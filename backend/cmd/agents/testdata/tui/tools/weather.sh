#!/bin/sh
# weather.sh — the bash tool of the terminal UI's tests.
case "${1:-}" in
describe)
  echo '{"slug": "weather", "description": "Tells the weather.", "args": []}'
  ;;
run)
  echo "checking the sky" >&2
  echo "sunny and 21C"
  ;;
*)
  echo "usage: $0 describe | run" >&2
  exit 2
  ;;
esac
