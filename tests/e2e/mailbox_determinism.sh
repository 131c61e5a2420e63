#!/usr/bin/env bash
# The ground truth depends on the options alone: the same seed gives byte-identical truth
# files however the threads interleave (and whether the run is recorded or not), another
# seed gives another one.
# usage: mailbox_determinism.sh MAILBOX
set -u
mailbox=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

run() { # output-file args...
	local out=$1
	shift
	if ! "$mailbox" "$@" --truth "$out" >/dev/null; then
		echo "FAIL: mailbox $* exited with status $?"
		exit 1
	fi
}

for processors in 1 2 3 7; do
	args=(--processors "$processors" --processes 9 --mailboxes 3 --messages 400 --quantum 3)
	run "$work/a.json" "${args[@]}" --seed 42
	run "$work/b.json" "${args[@]}" --seed 42
	run "$work/c.json" "${args[@]}" --seed 43
	if ! cmp -s "$work/a.json" "$work/b.json"; then
		echo "FAIL: two runs with seed 42 on $processors processor(s) differ:"
		diff "$work/a.json" "$work/b.json" | head -10
		fail=1
	fi
	if cmp -s "$work/a.json" "$work/c.json"; then
		echo "FAIL: seeds 42 and 43 on $processors processor(s) give the same truth"
		fail=1
	fi
done

# Recording must not change the logical run.
mkdir "$work/trace"
run "$work/plain.json" --processors 3 --messages 300 --seed 5
VIGIL_OUT="$work/trace" run "$work/recorded.json" --processors 3 --messages 300 --seed 5
if ! cmp -s "$work/plain.json" "$work/recorded.json"; then
	echo "FAIL: the truth of a recorded run differs from the same run unrecorded:"
	diff "$work/plain.json" "$work/recorded.json" | head -10
	fail=1
fi
exit $fail
