#!/bin/bash
# Run the libFuzzer target for a bounded time on a scratch copy of the seed corpus
# (libFuzzer adds what it finds to its first corpus directory).
# Usage: run-fuzz.sh FUZZER CORPUS SECONDS
set -euo pipefail
fuzzer=$(readlink -f "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp -r "$2" "$dir/corpus"
cd "$dir"
"$fuzzer" -max_total_time="$3" -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 corpus 2>&1 | tail -15
