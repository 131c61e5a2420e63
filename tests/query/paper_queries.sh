#!/usr/bin/env bash
# Records the mailbox example and runs the two queries of Snodgrass (TOCS 1988), as the
# paper writes them (docs/tquel.md, *Two queries*), with `vigil query`; compares the
# answers with the ones computed from the run's ground truth (paper_truth.py).
# The base tick is chosen from the trace's span so that Clock[10] ticks about 300 times.
# usage: paper_queries.sh BIN-DIR PYTHON3 MAILBOX-OPTIONS...
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
# without these inputs the comparison would only report noise: stop at the first failure
"$bin/relations_dump" "$work/trace" >"$work/tuples.jsonl" || { echo "FAIL: relations_dump exited with $?"; exit 1; }
"$bin/vigil" dump --json "$work/trace" >"$work/events.jsonl" 2>"$work/dump.err" ||
	{ echo "FAIL: vigil dump exited with $?: $(cat "$work/dump.err")"; exit 1; }
tick=$("$python" "$here/paper_truth.py" tick "$work/events.jsonl") || { echo "FAIL: no tick"; exit 1; }
"$bin/vigil" relations --json --tick "${tick}ns" "$work/trace" >"$work/listing.jsonl" ||
	{ echo "FAIL: vigil relations --json --tick ${tick}ns exited with $?"; exit 1; }

cat >"$work/q1.tq" <<'EOF'
range of S is SendMessage
range of W is Waiting
retrieve ResumedbyP1 (Process = W.Process)
valid at end of W
where S.Mailbox = W.Mailbox and S.Process = "P1"
when S precede end of W
EOF
cat >"$work/q2.tq" <<'EOF'
range of RO is RunningOn
range of C is Clock[10]
retrieve RunningOnEvery10 (Process = RO.Process, Processor = RO.Processor)
when C overlap RO
EOF

for q in q1 q2; do
	"$bin/vigil" query "$work/trace" -f "$work/$q.tq" --format json --tick "${tick}ns" \
		>"$work/$q.jsonl" 2>"$work/$q.err"
	rc=$?
	[ $rc = 0 ] || fail "vigil query -f $q.tq --tick ${tick}ns exited with $rc: $(head -5 "$work/$q.err")"
	[ -s "$work/$q.err" ] && [ $rc = 0 ] && fail "vigil query -f $q.tq wrote on stderr: $(head -5 "$work/$q.err")"
done
"$python" "$here/paper_truth.py" "$work/truth.json" "$work/tuples.jsonl" "$work/events.jsonl" \
	"$work/listing.jsonl" "$tick" "$work/q1.jsonl" "$work/q2.jsonl" || status=1
if [ $status != 0 ] && [ -n "${PAPER_KEEP:-}" ]; then
	# PAPER_KEEP=DIR keeps the trace, the queries and the answers for a reproduction
	rm -rf "$PAPER_KEEP" && cp -r "$work" "$PAPER_KEEP" && echo "kept in $PAPER_KEEP"
fi
exit $status
