#!/usr/bin/env bash
# Never finishes: starts a background child, records both pids in the file
# named by PID_FILE, then sleeps.
case "${1:-}" in
  describe)
    echo '{"slug": "hang", "description": "hangs with a background child", "args": []}'
    ;;
  run)
    sleep 1000 &
    child=$!
    echo "started"
    echo "$$ $child" > "$PID_FILE.tmp"
    mv "$PID_FILE.tmp" "$PID_FILE"
    sleep 1000
    ;;
esac
