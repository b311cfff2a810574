#!/bin/bash
# test-format.sh - every C file git tracks is as .clang-format says (clang-format 14, as
# Debian 12 ships it): `clang-format -i FILE` fixes one that is not.
set -u
cd "${MTRACE_SRC:?}" || exit 1
command -v clang-format >/dev/null || { echo "SKIP: clang-format is not installed"; exit 77; }
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: not a git checkout (the files to check are the tracked ones)"
	exit 77
fi
mapfile -t files < <(git ls-files '*.c' '*.h')
[ ${#files[@]} -gt 0 ] || { echo "FAIL: no C files found"; exit 1; }
if ! clang-format --dry-run -Werror "${files[@]}" 2>"${TMPDIR:-/tmp}/format.$$"; then
	grep -o '^[^:]*:[0-9]*' "${TMPDIR:-/tmp}/format.$$" | sort -u | head -40
	rm -f "${TMPDIR:-/tmp}/format.$$"
	echo "FAIL: not formatted (clang-format -i the files above)"
	exit 1
fi
rm -f "${TMPDIR:-/tmp}/format.$$"
echo "ok: ${#files[@]} files formatted as .clang-format says"
