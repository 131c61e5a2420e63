#!/usr/bin/env bash
# bench/run.sh BUILD_DIR: vigil and LTTng-UST side by side, in one run, on this machine.
#
# Runs the same loop of events (two int64 fields) through vigil-bench and lttng-bench in
# each mode, REPS times, alternating which tool goes first; counts the events of every
# recorded trace with babeltrace2; prints a markdown table of medians on stdout and writes
# every run and the summary as JSON into BENCH_OUT. Progress goes to stderr. See bench/README.md.
#
# Settings (environment): BENCH_REPS (7), BENCH_EVENTS (2000000, per thread, enabled
# runs), BENCH_DISABLED_EVENTS (100000000), BENCH_BURST_EVENTS (10000000), BENCH_BURST_REPS
# (3), BENCH_CPUS (0,1), BENCH_CALLGRIND (1), BENCH_OUT (BUILD_DIR/bench),
# BENCH_LTTNG_SUBBUF (2M) and BENCH_LTTNG_NSUBBUF (8): LTTng's per-CPU channel buffers,
# BENCH_CALLGRIND_EVENTS (200000), BENCH_BEFORE (another build directory, e.g. of the commit
# before a change: its vigil-bench, with its own libvigil, is counted by callgrind beside
# this one's, as "vigil-before"). VIGIL_BENCH_SMOKE=1: tiny defaults, and exit 1 when a
# vigil trace lost an event or its two readers disagree (bench/README.md, "Smoke run").
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: bench/run.sh BUILD_DIR   (a configured and built vigil build directory)" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
bin=$build/bench
smoke=${VIGIL_BENCH_SMOKE:-0}
if [ "$smoke" = 1 ]; then
	: "${BENCH_REPS:=1}" "${BENCH_EVENTS:=20000}" "${BENCH_DISABLED_EVENTS:=2000000}"
	: "${BENCH_BURST_EVENTS:=200000}" "${BENCH_BURST_REPS:=1}" "${BENCH_CALLGRIND_EVENTS:=20000}"
fi
reps=${BENCH_REPS:-7}
n_enabled=${BENCH_EVENTS:-2000000}
n_disabled=${BENCH_DISABLED_EVENTS:-100000000}
n_burst=${BENCH_BURST_EVENTS:-10000000}
burst_reps=${BENCH_BURST_REPS:-3}
n_callgrind=${BENCH_CALLGRIND_EVENTS:-200000}
callgrind=${BENCH_CALLGRIND:-1}
subbuf=${BENCH_LTTNG_SUBBUF:-2M}
nsubbuf=${BENCH_LTTNG_NSUBBUF:-8}
out=${BENCH_OUT:-$build/bench}
warmup=10000
if [ -n "${BENCH_CPUS:-}" ]; then
	cpus=$BENCH_CPUS
elif [ "$(nproc)" -ge 2 ]; then
	cpus=0,1
else
	cpus=0
fi

for v in BENCH_REPS:reps BENCH_EVENTS:n_enabled BENCH_DISABLED_EVENTS:n_disabled \
	BENCH_BURST_EVENTS:n_burst BENCH_BURST_REPS:burst_reps BENCH_LTTNG_NSUBBUF:nsubbuf \
	BENCH_CALLGRIND_EVENTS:n_callgrind; do
	var=${v#*:}
	if ! [[ ${!var} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench: ${v%%:*}=${!var} is not a positive integer" >&2
		exit 2
	fi
done
before=
if [ -n "${BENCH_BEFORE:-}" ]; then
	before=$(cd "$BENCH_BEFORE" 2>/dev/null && pwd) || before=
	if [ -z "$before" ] || [ ! -x "$before/bench/vigil-bench" ]; then
		echo "bench: BENCH_BEFORE=$BENCH_BEFORE has no bench/vigil-bench (build it there: cmake --build DIR --target vigil-bench)" >&2
		exit 2
	fi
fi
for p in "$bin/vigil-bench" "$bin/lttng-bench"; do
	if [ ! -x "$p" ]; then
		echo "bench: $p is missing (build with 'make build'; lttng-bench needs liblttng-ust-dev)" >&2
		exit 2
	fi
done
for c in lttng lttng-sessiond babeltrace2 python3; do
	if ! command -v "$c" >/dev/null; then
		echo "bench: '$c' is not installed (run 'make deps')" >&2
		exit 2
	fi
done

say() { echo "[bench] $*" >&2; }

mkdir -p "$out"
runs=$out/runs.jsonl
: >"$runs"
tmp=$(mktemp -d /tmp/vigil-bench.XXXXXX)
chmod 755 "$tmp"
sessiond_pid=

cleanup() {
	local rc=$?
	if [ -n "$sessiond_pid" ] && kill -0 "$sessiond_pid" 2>/dev/null; then
		# Its consumer daemons stop with it; should it not stop, they are killed too.
		local children
		mapfile -t children < <(pgrep -P "$sessiond_pid" || true)
		kill -TERM "$sessiond_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$sessiond_pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$sessiond_pid" 2>/dev/null; then
			kill -KILL "$sessiond_pid" "${children[@]}" 2>/dev/null || true
		fi
	fi
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- LTTng: our own session daemon, private to this run -------------------------------
# A root session daemon always lives in /var/run/lttng (one per machine); as root we run
# ours, its tools and the traced program as 'nobody', whose daemon lives in LTTNG_HOME.
lt_home=$tmp/lttng-home
mkdir -p "$lt_home" "$tmp/lt" "$tmp/bin"
cp "$bin/lttng-bench" "$tmp/bin/" # readable by 'nobody' whatever BUILD_DIR's permissions
as=()
if [ "$(id -u)" -eq 0 ]; then
	if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
		echo "bench: as root the LTTng side runs as 'nobody' through setpriv; neither is available" >&2
		exit 2
	fi
	chown "$(id -u nobody):$(id -g nobody)" "$lt_home" "$tmp/lt"
	as=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
fi
lt_env=(env HOME="$lt_home" LTTNG_HOME="$lt_home" LTTNG_UST_REGISTER_TIMEOUT=10000)
lt() { "${as[@]}" "${lt_env[@]}" lttng "$@"; }

say "starting lttng-sessiond (LTTNG_HOME=$lt_home${as:+, as nobody})"
"${as[@]}" "${lt_env[@]}" lttng-sessiond --daemonize --no-kernel
sessiond_pid=$(cat "$lt_home/.lttng/lttng-sessiond.pid")

# ---- counting ------------------------------------------------------------------------
# count_events DIR: "events discarded_messages" as babeltrace2 reads them (-1 if it cannot).
count_events() {
	local text
	if ! text=$(babeltrace2 "$1" -c sink.utils.counter -p step=+0 2>"$tmp/bt.err"); then
		say "babeltrace2 cannot read $1: $(head -c 300 "$tmp/bt.err" | tr '\n' ' ')"
		echo "-1 -1"
		return
	fi
	awk '/Event messages/ {e = $1} /Discarded event messages/ {d = $1}
	     END {print (e == "" ? 0 : e), (d == "" ? 0 : d)}' <<<"$text"
}

# record KIND REP TOOL JSON [EXTRA]: appends the run (with EXTRA, a JSON fragment
# starting with a comma) to runs.jsonl and says how it went.
record() {
	local kind=$1 rep=$2 json=$4 extra=${5:-}
	echo "${json%\}},\"kind\":\"$kind\",\"rep\":$rep$extra}" >>"$runs"
	local nspe lost
	nspe=$(sed -n 's/.*"ns_per_event":\([0-9.]*\).*/\1/p' <<<"$json")
	lost=$(sed -n 's/.*"lost":\(-\{0,1\}[0-9]*\).*/, lost \1/p' <<<"$extra")
	say "$kind rep $rep $3: $nspe ns/event$lost"
}

# dump_count DIR: "events discarded damaged" of bench.pair as `vigil dump --stats` reads
# them: a second reader for vigil's traces, next to babeltrace2 (-1 if it cannot).
dump_count() {
	local text rc=0 line
	local re='^vigil dump: .*\(([0-9]+) (shown|matching)\).*; ([0-9]+) events discarded; ([0-9]+) damaged'
	if [ -x "$build/bin/vigil" ]; then
		# Exit status 1 is damage found, with the counts still printed.
		text=$("$build/bin/vigil" dump --stats --name bench.pair "$1" 2>&1 >/dev/null) || rc=$?
		if [ $rc -le 1 ]; then
			while IFS= read -r line; do
				if [[ $line =~ $re ]]; then
					echo "${BASH_REMATCH[1]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]}"
					return
				fi
			done <<<"$text"
		fi
	fi
	echo "-1 -1 -1"
}

# trace_bytes DIR: the bytes of every file of a trace (streams, metadata, LTTng's indexes).
trace_bytes() {
	find "$1" -type f -printf '%s\n' | awk '{s += $1} END {printf "%.0f\n", s}'
}

# counted EXPECTED DIR TRACER_DISCARDED: the JSON fragment of a counted trace.
counted() {
	local found dmsg
	read -r found dmsg < <(count_events "$2")
	echo ",\"found\":$found,\"lost\":$((found < 0 ? -1 : $1 - found))," \
		"\"discarded_messages\":$dmsg,\"tracer_discarded\":$3," \
		"\"trace_bytes\":$(trace_bytes "$2")" | tr -d ' '
}

# consumer_cpu_ns: CPU time used so far by our LTTng consumer daemons (all their threads).
consumer_cpu_ns() {
	local pid
	for pid in $(pgrep -P "$sessiond_pid" -x lttng-consumerd || true); do
		cat /proc/"$pid"/task/*/schedstat 2>/dev/null || true
	done | awk '{s += $1} END {printf "%.0f\n", s}'
}

# run_vigil KIND REP MODE THREADS EVENTS
run_vigil() {
	local kind=$1 rep=$2 mode=$3 threads=$4 n=$5 json
	local args=(--mode "$mode" --threads "$threads" --events "$n" --warmup "$warmup" --cpus "$cpus")
	local trace=$tmp/vg
	rm -rf "$trace"
	case $kind in
	baseline | off) json=$(env -u VIGIL_OUT "$bin/vigil-bench" "${args[@]}") ;;
	disabled) json=$(VIGIL_OUT=$trace VIGIL_SENSORS=-bench.pair "$bin/vigil-bench" "${args[@]}") ;;
	*)
		# Built-in vg.* events off: the trace then holds the bench's events only.
		json=$(VIGIL_OUT=$trace VIGIL_SENSORS='-vg.*' "$bin/vigil-bench" "${args[@]}")
		local discarded
		discarded=$(sed -n 's/.*"discarded":\(-\{0,1\}[0-9]*\).*/\1/p' <<<"$json")
		local extra df dd dg
		extra=$(counted $(((n + warmup) * threads)) "$trace" "$discarded")
		read -r df dd dg < <(dump_count "$trace")
		extra+=",\"dump_found\":$df,\"dump_discarded\":$dd,\"dump_damaged\":$dg"
		record "$kind" "$rep" vigil "$json" "$extra"
		rm -rf "$trace"
		return
		;;
	esac
	record "$kind" "$rep" vigil "$json"
}

# run_lttng KIND REP MODE THREADS EVENTS
seq_no=0
run_lttng() {
	local kind=$1 rep=$2 mode=$3 threads=$4 n=$5 json
	local args=(--mode "$mode" --threads "$threads" --events "$n" --warmup "$warmup" --cpus "$cpus")
	if [ "$kind" = baseline ]; then
		json=$("${as[@]}" "${lt_env[@]}" "$tmp/bin/lttng-bench" "${args[@]}")
		record "$kind" "$rep" lttng-ust "$json"
		return
	fi
	seq_no=$((seq_no + 1))
	local s=vbench$seq_no trace=$tmp/lt/run$seq_no event=vigil_bench:pair
	[ "$mode" = enabled ] || event=vigil_bench:none # the session runs, the tracepoint is off
	{
		lt create "$s" --output="$trace"
		lt enable-channel --userspace --session="$s" --buffers-uid \
			--subbuf-size="$subbuf" --num-subbuf="$nsubbuf" ch
		lt enable-event --userspace --session="$s" --channel=ch "$event"
		lt start "$s"
	} >"$tmp/lttng.log"
	local cpu0 cpu1
	cpu0=$(consumer_cpu_ns)
	json=$("${as[@]}" "${lt_env[@]}" "$tmp/bin/lttng-bench" "${args[@]}")
	lt stop "$s" >>"$tmp/lttng.log" # waits until the consumer has written everything
	cpu1=$(consumer_cpu_ns)
	local discarded
	discarded=$(lt list "$s" -c ch | awk '/Discarded events:/ {print $3; exit}')
	lt destroy "$s" >>"$tmp/lttng.log"
	# The consumer daemon's CPU time over the run, up to the end of its flush.
	local extra
	extra=$(awk -v t=$((cpu1 - cpu0)) -v n=$((n * threads)) \
		'BEGIN {printf ",\"consumer_cpu_ns_per_event\":%.4f", t / n}')
	if [ "$mode" = enabled ]; then
		extra+=$(counted $(((n + warmup) * threads)) "$trace" "${discarded:--1}")
	fi
	record "$kind" "$rep" lttng-ust "$json" "$extra"
	rm -rf "$trace"
}

# both KIND REP MODE THREADS EVENTS: one run of each tool, the first alternating by rep.
both() {
	if [ $(($2 % 2)) -eq 1 ]; then
		run_vigil "$@"
		run_lttng "$@"
	else
		run_lttng "$@"
		run_vigil "$@"
	fi
}

load_start=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load_start" -v n="$(nproc)" 'BEGIN {exit !(l > n / 2)}'; then
	say "warning: load average $load_start on $(nproc) cpus: other work will distort the figures"
fi
say "cpus $cpus; $reps reps; enabled $n_enabled events/thread, disabled $n_disabled," \
	"burst $n_burst x $burst_reps; LTTng channel ${nsubbuf}x$subbuf per CPU"
for rep in $(seq "$reps"); do
	both baseline "$rep" baseline 1 "$n_disabled"
	run_vigil off "$rep" disabled 1 "$n_disabled"
	both disabled "$rep" disabled 1 "$n_disabled"
	both enabled-1t "$rep" enabled 1 "$n_enabled"
	both enabled-2t "$rep" enabled 2 "$n_enabled"
done
for rep in $(seq "$burst_reps"); do
	both burst "$rep" enabled 1 "$n_burst"
done

# ---- callgrind: instructions per event (deterministic, unlike the clock on a VM) -------
# callgrind_ir TOOL KIND CMD...: counts the instructions of bench_loop and its callees.
callgrind_ir() {
	local tool=$1 kind=$2 n=$n_callgrind
	shift 2
	local f=$tmp/cg.out
	rm -f "$f"
	if ! "$@" --mode "${kind#callgrind-}" --events $n --warmup 0 --cpus 0 >/dev/null \
		2>"$tmp/cg.err"; then
		say "callgrind $tool $kind failed: $(tail -c 300 "$tmp/cg.err" | tr '\n' ' ')"
		return
	fi
	local ir
	ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
	echo "{\"tool\":\"$tool\",\"kind\":\"$kind\",\"events\":$n,\"instructions\":${ir:-0}}" >>"$runs"
	say "$kind $tool: $(awk -v a="${ir:-0}" -v n=$n 'BEGIN {printf "%.1f", a / n}') instructions/event"
}
if [ "$callgrind" != 0 ] && command -v valgrind >/dev/null; then
	chmod 777 "$tmp" # callgrind's output file, written by 'nobody' for LTTng
	vg=(valgrind --tool=callgrind --toggle-collect=bench_loop --callgrind-out-file="$tmp/cg.out")
	rm -rf "$tmp/vg"
	callgrind_ir vigil callgrind-enabled env VIGIL_OUT="$tmp/vg" VIGIL_SENSORS='-vg.*' \
		"${vg[@]}" "$bin/vigil-bench"
	rm -rf "$tmp/vg"
	callgrind_ir vigil callgrind-disabled env VIGIL_OUT="$tmp/vg" VIGIL_SENSORS=-bench.pair \
		"${vg[@]}" "$bin/vigil-bench"
	rm -rf "$tmp/vg"
	if [ -n "$before" ]; then # the same counts of the other build, in this run
		callgrind_ir vigil-before callgrind-enabled env VIGIL_OUT="$tmp/vg" \
			VIGIL_SENSORS='-vg.*' "${vg[@]}" "$before/bench/vigil-bench"
		rm -rf "$tmp/vg"
		callgrind_ir vigil-before callgrind-disabled env VIGIL_OUT="$tmp/vg" \
			VIGIL_SENSORS=-bench.pair "${vg[@]}" "$before/bench/vigil-bench"
		rm -rf "$tmp/vg"
	fi
	for m in enabled disabled; do
		e=vigil_bench:pair
		[ $m = enabled ] || e=vigil_bench:none
		{
			lt create vbench-cg --output="$tmp/lt/cg"
			lt enable-channel --userspace --session=vbench-cg --buffers-uid \
				--subbuf-size="$subbuf" --num-subbuf="$nsubbuf" ch
			lt enable-event --userspace --session=vbench-cg --channel=ch $e
			lt start vbench-cg
		} >"$tmp/lttng.log"
		callgrind_ir lttng-ust callgrind-$m "${as[@]}" "${lt_env[@]}" "${vg[@]}" \
			"$tmp/bin/lttng-bench"
		{ lt stop vbench-cg && lt destroy vbench-cg; } >>"$tmp/lttng.log"
		rm -rf "$tmp/lt/cg"
	done
fi

# ---- summary ---------------------------------------------------------------------------
load_end=$(cut -d' ' -f1 /proc/loadavg)
lttng_version=$(lttng --version 2>/dev/null | head -1)
commit=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)
python3 "$here/report.py" "$runs" "$out/results.json" smoke="$smoke" \
	cpus="$cpus" reps="$reps" warmup_per_thread="$warmup" \
	lttng_channel="${nsubbuf}x$subbuf per CPU, per-UID buffers, discard mode" \
	lttng_version="$lttng_version" vigil_commit="$commit" \
	loadavg_start="$load_start" loadavg_end="$load_end" nproc="$(nproc)" \
	cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" \
	kernel="$(uname -r)"
say "runs: $runs; summary: $out/results.json"
