#!/bin/sh
# Runs the scaling measurement from a scaling kit (make scaling-kit): JSON on stdout.
set -e
cd "$(dirname "$0")"
exec ./bench-scaling -data minilm-bf16.bin -dtype bfloat16 -label "all-MiniLM-L6-v2, bf16, 1 tensor" \
	-codecs "${CODECS:-planes,lz4,zstd}" -reps "${REPS:-9}" "$@"
