#!/usr/bin/env bash
# Cannot describe itself.
echo "missing dependency: jq" >&2
exit 1
