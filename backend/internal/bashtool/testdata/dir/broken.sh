#!/usr/bin/env bash
echo "cannot describe" >&2
exit 1
