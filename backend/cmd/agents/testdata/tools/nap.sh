#!/bin/sh
# nap.sh — the bash tool of the crash test. A run starts a background
# sleep in its own process group, records "<its pid> <the sleep's pid>" in
# a file of its own under $CRASH_PID_DIR, and waits for the sleep.
case "${1:-}" in
describe)
  echo '{"slug": "nap", "description": "Naps for a long time.", "args": []}'
  ;;
run)
  sleep 600 &
  echo "$$ $!" > "$CRASH_PID_DIR/nap.$$.tmp"
  mv "$CRASH_PID_DIR/nap.$$.tmp" "$CRASH_PID_DIR/nap.$$"
  echo "napping" >&2
  wait
  echo "rested"
  ;;
*)
  echo "usage: $0 describe | run" >&2
  exit 2
  ;;
esac
