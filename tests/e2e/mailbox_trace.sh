#!/usr/bin/env bash
# Records the mailbox example and compares the trace with the run's ground truth: events
# per sensor, entity names, and the order of the facts per entity.
#   record: with `vigil record`, read back with `vigil dump --json`
#   direct: with VIGIL_OUT (the program links libvigil), read back with babeltrace2
# usage: mailbox_trace.sh record|direct BIN-DIR PYTHON3 MAILBOX-OPTIONS...
set -u
mode=$1 bin=$2 python=$3
shift 3
check="$(dirname "$0")/../../examples/mailbox/check_trace.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $mode in
record)
	"$bin/vigil" record -o "$work/trace" -- "$bin/mailbox" "$@" --truth "$work/truth.json" ||
		{ echo "FAIL: vigil record of mailbox $* exited with status $?"; exit 1; }
	reader=(--vigil "$bin/vigil")
	;;
direct)
	mkdir "$work/trace"
	VIGIL_OUT="$work/trace" "$bin/mailbox" "$@" --truth "$work/truth.json" ||
		{ echo "FAIL: mailbox $* exited with status $?"; exit 1; }
	reader=(--babeltrace)
	;;
*)
	echo "usage: mailbox_trace.sh record|direct BIN-DIR PYTHON3 MAILBOX-OPTIONS..." >&2
	exit 2
	;;
esac
"$python" "$check" "$work/truth.json" "$work/trace" "${reader[@]}"
