#!/usr/bin/env bash
# bench/reader_vs.sh BUILD_DIR BASE_BUILD_DIR: the trace readers of two builds side by side
# (a change of src/trace or of a reader against the build it came from, e.g. main's).
#
# Records BENCH_READER_EVENTS events of bench/query-subject with BUILD_DIR's vigil, checks
# that both builds give the same bytes for `vigil dump`, `vigil relations` and a query, then
# times with farm-bench (A = BUILD_DIR, B = BASE_BUILD_DIR, in turn, ratio A/B pair by pair):
# `vigil dump TRACE > /dev/null` (decoding and the merge) and `vigil query` of a selective
# query (building the relations dominates). Prints farm-bench's reports on stdout.
#
# Settings (environment): BENCH_READER_EVENTS (3000000), BENCH_READER_RUNS (5),
# BENCH_READER_TMP (/tmp). See bench/README.md, "Trace readers, two builds".
set -euo pipefail

if [ $# -ne 2 ] || [ ! -x "$1/bin/vigil" ] || [ ! -x "$2/bin/vigil" ] ||
	[ ! -x "$1/bench/query-subject" ]; then
	echo "usage: bench/reader_vs.sh BUILD_DIR BASE_BUILD_DIR   (two built vigil build directories)" >&2
	exit 2
fi
for tool in farm-bench cmp; do
	command -v "$tool" >/dev/null || { echo "bench: '$tool' is not installed" >&2; exit 2; }
done
a=$(cd "$1" && pwd)/bin/vigil
b=$(cd "$2" && pwd)/bin/vigil
events=${BENCH_READER_EVENTS:-3000000}
runs=${BENCH_READER_RUNS:-5}
say() { echo "[reader-vs] $*" >&2; }

tmp=$(mktemp -d "${BENCH_READER_TMP:-/tmp}/vigil-readervs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

say "recording $events events of query-subject into $tmp/trace"
"$a" record -q -o "$tmp/trace" -- "$1/bench/query-subject" --events "$events" --threads 2 >&2
query='range of S is Send retrieve (S.conn, S.size) where S.size > 4000'
printf '%s\n' "$query" >"$tmp/q.tq" # a file: --vs splits its command on spaces

say "same answers from both builds"
for side in a b; do
	bin=${!side}
	"$bin" dump "$tmp/trace" >"$tmp/dump.$side" 2>"$tmp/dump-err.$side"
	"$bin" relations "$tmp/trace" >"$tmp/rel.$side"
	"$bin" query "$tmp/trace" -f "$tmp/q.tq" >"$tmp/query.$side"
done
for out in dump dump-err rel query; do
	cmp -s "$tmp/$out.a" "$tmp/$out.b" || { echo "bench: $out differs between the builds" >&2; exit 1; }
done
rm -f "$tmp"/dump.* "$tmp"/rel.* "$tmp"/query.*

echo "## vigil dump TRACE > /dev/null (A: $1, B: $2)"
farm-bench -n "$runs" --timeout 1800 --vs "sh -c 'exec \"$b\" dump \"$tmp/trace\" >/dev/null 2>&1'" \
	-- sh -c "exec \"$a\" dump \"$tmp/trace\" >/dev/null 2>&1"
echo
echo "## vigil query TRACE -e '$query' (A: $1, B: $2)"
farm-bench -n "$runs" --timeout 1800 --vs "sh -c 'exec \"$b\" query \"$tmp/trace\" -f \"$tmp/q.tq\" >/dev/null'" \
	-- sh -c "exec \"$a\" query \"$tmp/trace\" -f \"$tmp/q.tq\" >/dev/null"
