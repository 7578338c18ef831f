#!/usr/bin/env bash
# Reports progress on stderr. After the first line it waits (for at most
# 10 seconds) until the file named by GO_ON_FILE exists, so it only
# finishes if its progress is seen while it runs.
case "${1:-}" in
  describe)
    echo '{"slug": "progress", "description": "reports progress on stderr", "args": []}'
    ;;
  run)
    echo "step 1 of 3" >&2
    for _ in $(seq 1000); do
      [[ -e "$GO_ON_FILE" ]] && break
      sleep 0.01
    done
    [[ -e "$GO_ON_FILE" ]] || { echo "nobody saw step 1" >&2; exit 1; }
    printf 'step 2 of 3\r\n\n   \nstep 3 ' >&2
    printf 'of 3' >&2
    echo "result"
    ;;
esac
