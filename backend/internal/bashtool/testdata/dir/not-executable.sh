#!/usr/bin/env bash
# Not executable: a directory toolbox must not run it.
echo '{"slug": "not_executable", "description": "must be skipped", "args": []}'
