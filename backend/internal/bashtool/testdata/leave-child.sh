#!/usr/bin/env bash
# Exits at once but leaves a background child that still holds stdout and
# stderr; records the child's pid in the file named by PID_FILE.
case "${1:-}" in
  describe)
    echo '{"slug": "leave_child", "description": "exits, leaving a child behind", "args": []}'
    ;;
  run)
    sleep 1000 &
    echo "$!" > "$PID_FILE"
    echo "done"
    ;;
esac
