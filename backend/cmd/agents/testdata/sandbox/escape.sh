#!/bin/sh
# escape.sh — the bash tool of the sandbox tests: it tries one thing the
# sandbox may stop, named by its argument "ACTION TARGET".
case "${1:-}" in
describe)
  echo '{"slug": "escape", "description": "Tries one thing.", "args": [{"name": "command", "description": "ACTION TARGET", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"}]}'
  ;;
run)
  action=${2%% *}
  target=${2#* }
  case "$action" in
  write) echo written > "$target" && echo "wrote $target" ;;
  read) cat -- "$target" ;;
  connect) bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && head -n1 <&3' connect "$target" ;;
  fork)
    n=0
    while [ "$n" -lt "$target" ]; do
      sleep 60 &
      n=$((n + 1))
    done
    echo "started $n"
    ;;
  *) echo "unknown action $action" >&2; exit 2 ;;
  esac
  ;;
*)
  echo "usage: $0 describe | run 'ACTION TARGET'" >&2
  exit 2
  ;;
esac
