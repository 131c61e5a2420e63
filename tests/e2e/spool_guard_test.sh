#!/bin/sh
# tests/spool_guard.py can fail: a VIGIL_TO subject (the mailbox, linked with libvigil)
# whose collector is unreachable keeps its default spool /dev/shm/vigil-spool-UID-PID;
# under the guard that fails the run with one line and the spool is removed. The same
# subject with VIGIL_SPOOL in the test's folder passes, and the guard keeps a command's
# own failure and a skip (77).
# usage: spool_guard_test.sh (VIGIL_BIN, VIGIL_SRC in the environment)
set -u
bin=${VIGIL_BIN:-build/bin}
guard="/usr/bin/python3 ${VIGIL_SRC:-.}/tests/spool_guard.py --"
work=$(mktemp -d /tmp/vigil-spoolguard-XXXXXX)
fail() { echo "FAIL: $*"; echo "kept $work"; exit 1; }
unset VIGIL_OUT VIGIL_SPOOL LD_PRELOAD VIGIL_TO_CA
export VIGIL_TO=127.0.0.1:1 VIGIL_TO_LINGER=0

$guard "$bin/mailbox" --messages 10 >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 1 ] || fail "a left spool: guard exit $rc: $(cat "$work/err")"
line=$(grep '^spool_guard: the test left ' "$work/err")
[ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] || fail "expected one line: $(cat "$work/err")"
left=$(printf '%s\n' "$line" | sed -n 's/^spool_guard: the test left \([^ ]*\) .*/\1/p')
case $left in
/dev/shm/vigil-spool-*-* | /tmp/vigil-spool-*-*) ;;
*) fail "not a spool path: $line" ;;
esac
[ ! -e "$left" ] || fail "$left was not removed"

VIGIL_SPOOL=$work/spool $guard "$bin/mailbox" --messages 10 >"$work/out" 2>"$work/err" ||
	fail "spool in the test's folder: exit $?: $(cat "$work/err")"
[ -d "$work/spool" ] || fail "the subject kept no spool in $work/spool: $(cat "$work/err")"
! grep -q spool_guard "$work/err" || fail "guard complained: $(cat "$work/err")"

$guard /bin/sh -c 'exit 3' 2>"$work/err"
[ $? -eq 3 ] || fail "a failing command's status was not kept"
$guard /bin/sh -c 'exit 77' 2>"$work/err"
[ $? -eq 77 ] || fail "a skip's status was not kept"
rm -rf "$work"
echo "spool_guard: a left spool fails the test, a spool in the test's folder does not"
