#!/bin/bash
set -euo pipefail

# Code analysis script of the code-review skill.
if [ "$#" -ge 1 ] && [ "$1" == "describe" ]; then
    echo '{
        "slug": "analyze-changes",
        "description": "Analyze code changes and provide metrics",
        "args": [
            {"name": "file_path", "description": "Path to file to analyze", "type": "string", "backing_type": "string", "arity": "single", "mode": "positional"}
        ]
    }'
    exit 0
fi

if [ "$#" -ge 1 ] && [ "$1" == "run" ]; then
    shift
    echo "Analysis of: $1"
    echo "Language: ${1##*.}"
    exit 0
fi

echo "Usage: $0 <describe|run>" >&2
exit 1
