#!/bin/bash
# A bounded libFuzzer run of a fuzz target (clang, -Dfuzzer), on a scratch copy of its
# seed corpus when it has one (libFuzzer adds what it finds to its first corpus
# directory).  Longer on demand: FUZZER -max_total_time=600 CORPUS_DIR.
# usage: test-libfuzzer.sh FUZZER SECONDS RSS_LIMIT_MB [CORPUS]
set -euo pipefail
fuzzer=$(readlink -f "$1")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
corpus=()
if [ $# -ge 4 ]; then
	cp -r "$4" "$dir/corpus"
	corpus=(corpus)
fi
cd "$dir"
"$fuzzer" -max_total_time="$2" -timeout=10 -rss_limit_mb="$3" -print_final_stats=1 \
	"${corpus[@]}" 2>&1 | tail -15
