#!/usr/bin/env bash
# Records a subject with `vigil record`, then runs a check on the recording: every
# argument @TRACE of the check is replaced by the trace's folder.
# usage: query_model.sh BIN-DIR CHECK [CHECK-ARGS...] -- SUBJECT [SUBJECT-ARGS...]
set -u
bin=$1
shift
check=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	check+=("$1")
	shift
done
[ $# -gt 1 ] || { echo "usage: query_model.sh BIN-DIR CHECK [ARGS...] -- SUBJECT [ARGS...]"; exit 2; }
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/vigil" record -o "$work/trace" -- "$@" >"$work/subject.out" 2>&1 ||
	{ cat "$work/subject.out"; echo "FAIL: vigil record -- $*"; exit 1; }
check=("${check[@]/#@TRACE/$work/trace}")
"${check[@]}"
