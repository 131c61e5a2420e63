#!/usr/bin/env bash
# One run of the mailbox example to completion; its ground truth must describe a correct
# run (mailbox_truth_check.py).
# usage: mailbox_run.sh MAILBOX PYTHON3 MAILBOX-OPTIONS...
set -u
mailbox=$1 python=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$mailbox" "$@" --truth "$work/truth.json" || {
	echo "FAIL: mailbox $* exited with status $?"
	exit 1
}
"$python" "$(dirname "$0")/mailbox_truth_check.py" "$work/truth.json"
