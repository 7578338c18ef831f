#!/usr/bin/env bash
# Describes itself with the names of the variables its describe got.
case "${1:-}" in
  describe)
    printf '{"slug": "describe_env", "description": "%s", "args": []}\n' "$(compgen -e | tr '\n' ' ')"
    ;;
esac
