#!/usr/bin/env bash
# Records the mailbox example with `vigil record`, builds the trace's relations and checks
# them against the run's ground truth (relations_truth.py); then `vigil relations` on the
# trace, on bad usage and on a damaged copy of the trace.
# usage: relations_mailbox.sh BIN-DIR PYTHON3 MAILBOX-OPTIONS...
set -u
bin=$1 python=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

"$bin/vigil" record -o "$work/trace" -- "$bin/mailbox" "$@" --truth "$work/truth.json" \
	>"$work/mailbox.out" || { cat "$work/mailbox.out"; echo "FAIL: vigil record of mailbox $*"; exit 1; }
"$bin/relations_dump" "$work/trace" >"$work/tuples.jsonl" || fail "relations_dump exited with $?"
"$bin/vigil" relations --json --tick 1ms "$work/trace" >"$work/listing.jsonl" ||
	fail "vigil relations --json exited with $?"
"$python" "$here/relations_truth.py" "$work/truth.json" "$work/tuples.jsonl" mailbox \
	"$work/listing.jsonl" || status=1

# the text listing names every relation with its kind
"$bin/vigil" relations "$work/trace" >"$work/listing.txt" || fail "vigil relations exited with $?"
for line in "Waiting  interval" "RunningOn  interval" "ProcessState  state" \
	"SendMessage  event" "Clock  event" "Process  entity" "Mailbox  entity" "Processor  entity"; do
	grep -q "^$line " "$work/listing.txt" || fail "vigil relations: no line starting '$line'"
done

# usage and unreadable input: one line on stderr, exit 2
expect() { # STATUS LINES-ON-STDERR ARGS...
	local want=$1 lines=$2
	shift 2
	"$bin/vigil" relations "$@" >"$work/out" 2>"$work/err"
	local got=$?
	[ "$got" = "$want" ] || fail "vigil relations $*: exit $got, expected $want"
	[ "$(wc -l <"$work/err")" = "$lines" ] ||
		fail "vigil relations $*: expected $lines line(s) on stderr, got: $(cat "$work/err")"
}
expect 2 1
expect 2 1 --bogus "$work/trace"
expect 2 1 "$work/no-such-trace"
expect 2 1 --tick 0 "$work/trace"
expect 2 1 --tick "$work/trace"
expect 0 0 --help
grep -q "^examples:" "$work/out" || fail "vigil relations --help shows no examples"

# a damaged copy: the end of a stream cut off; still listed, exit 1
cp -r "$work/trace" "$work/cut"
stream=$(find "$work/cut" -mindepth 2 -type f ! -name metadata ! -name '.*' | sort | head -1)
size=$(stat -c %s "$stream")
truncate -s $((size - 7)) "$stream"
expect 1 1 "$work/cut"
grep -q "^SendMessage  event" "$work/out" || fail "vigil relations on a damaged trace lists nothing"
grep -q "damaged place" "$work/err" || fail "vigil relations on a damaged trace: $(cat "$work/err")"
exit $status
