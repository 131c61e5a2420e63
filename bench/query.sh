#!/usr/bin/env bash
# bench/query.sh BUILD_DIR [--dry-run]: vigil's TQuel engine against SQLite, same data.
#
# Records BENCH_QUERY_EVENTS events of bench/query-subject (relations Request, Lock, Send)
# with `vigil record`, loads the same tuples into SQLite with the indexes a competent user
# would build, and answers the same queries on both sides (bench/query_bench.py); the
# answers must agree. Prints a markdown table on stdout and writes BENCH_OUT/query.json;
# progress goes to stderr. --dry-run skips the vigil side. See bench/README.md.
#
# Settings (environment): BENCH_QUERY_EVENTS (10000000), BENCH_QUERY_THREADS (2: the
# subject's), BENCH_QUERY_VIGIL_THREADS (1,2: vigil query --threads), BENCH_QUERY_REPS (3),
# BENCH_QUERY_SQL_TIMEOUT (20, seconds per SQL plan and run),
# BENCH_QUERY_TMP (/tmp: where the trace and the SQLite file go), BENCH_OUT (BUILD_DIR/bench).
# VIGIL_BENCH_SMOKE=1: 200000 events, 1 repetition (the answers are still checked).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dry=()
if [ $# -eq 2 ] && [ "$2" = --dry-run ]; then
	dry=(--dry-run)
elif [ $# -ne 1 ]; then
	set -- ''
fi
if [ ! -d "$1" ]; then
	echo "usage: bench/query.sh BUILD_DIR [--dry-run]   (a configured and built vigil build directory)" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
if [ "${VIGIL_BENCH_SMOKE:-0}" = 1 ]; then # bench/README.md, "Smoke run"
	: "${BENCH_QUERY_EVENTS:=200000}" "${BENCH_QUERY_REPS:=1}"
fi
events=${BENCH_QUERY_EVENTS:-10000000}
threads=${BENCH_QUERY_THREADS:-2}
reps=${BENCH_QUERY_REPS:-3}
out=${BENCH_OUT:-$build/bench}
for v in BENCH_QUERY_EVENTS:events BENCH_QUERY_THREADS:threads BENCH_QUERY_REPS:reps; do
	var=${v#*:}
	if ! [[ ${!var} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: ${v%%:*}=${!var} is not a positive integer" >&2
		exit 2
	fi
done
for p in "$build/bench/query-subject" "$build/bin/vigil" "$build/bin/relations_dump"; do
	if [ ! -x "$p" ]; then
		echo "bench: $p is missing (build with 'make build')" >&2
		exit 2
	fi
done
if ! command -v python3 >/dev/null; then
	echo "bench: 'python3' is not installed (run 'make deps')" >&2
	exit 2
fi

say() { echo "[query-bench] $*" >&2; }

tmp=$(mktemp -d "${BENCH_QUERY_TMP:-/tmp}/vigil-qbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

say "recording $events events of query-subject ($threads threads) into $tmp/trace"
start=$(date +%s.%N)
subject=$("$build/bin/vigil" record -q -o "$tmp/trace" -- \
	"$build/bench/query-subject" --events "$events" --threads "$threads")
say "recorded in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}') s:" \
	"$subject; trace $(du -sh "$tmp/trace" | cut -f1)"

# DuckDB, the peer beside SQLite: the npm package pinned in bench/duckdb/package-lock.json,
# installed once into the build directory (npm ci, from the npm registry only; bench/benchlib.py).
duck=(--no-duckdb)
duckdir=$(python3 "$here/benchlib.py" duckdb-npm "$build")
if [ -n "$duckdir" ]; then
	duck=(--duckdb "$duckdir")
fi

# The driver's status: 0, or 1 when an answer differs (MISMATCH) or a run failed.
python3 "$here/query_bench.py" --bin "$build/bin" --trace "$tmp/trace" --db "$tmp/bench.db" \
	--out "$out" --reps "$reps" --subject "$subject" "${duck[@]}" "${dry[@]}"
