#!/bin/sh
# What vigil record says before it records (issue: two lines and an empty folder for a
# program that does not exist; --max-size 10Q accepted with a warning about a variable
# the user never set; "not empty" for an empty folder whose parent is read-only).
# usage: record_cli_test.sh (VIGIL_BIN in the environment)
set -u
vigil=${VIGIL_BIN:-build/bin}/vigil
work=$(mktemp -d /tmp/vigil-reccli-XXXXXX)
fail() { echo "FAIL: $*"; echo "kept $work"; exit 1; }
one_line() { # RC-WANTED TEXT CMD...
	want=$1 text=$2
	shift 2
	"$@" >"$work/out" 2>"$work/err"
	rc=$?
	[ $rc -eq "$want" ] || fail "$*: exit $rc, expected $want: $(cat "$work/err")"
	[ "$(wc -l <"$work/err")" -eq 1 ] || fail "$*: expected one line, got: $(cat "$work/err")"
	grep -qF -- "$text" "$work/err" || fail "$*: expected '$text', got: $(cat "$work/err")"
}
one_line 127 "vigil record: cannot run ./no_such_prog: No such file or directory" \
	"$vigil" record -o "$work/a" -- ./no_such_prog
[ ! -e "$work/a" ] || fail "a folder was made for a program that does not exist"
one_line 127 "vigil record: cannot run no_such_prog_x: not found on PATH" \
	"$vigil" record -o "$work/a" -- no_such_prog_x
one_line 2 "vigil record: --max-size 10Q: not a size of at least 4K" \
	"$vigil" record -o "$work/a" --max-size 10Q -- true
[ ! -e "$work/a" ] || fail "a folder was made for a bad --max-size"
one_line 2 "its parent folder does not exist" "$vigil" record -o "$work/no/such/dir" -- true
mkdir "$work/empty"
one_line 0 "vigil record: 4 events from 1 process image, 1 thread in" \
	"$vigil" record -o "$work/empty" -- true
one_line 2 "is not empty" "$vigil" record -o "$work/empty" -- true
# A --sensors pattern that matches no sensor is said (the events are NAME.begin/.end).
bin=$(dirname "$vigil")
"$vigil" record -o "$work/pat" --sensors 'mailbox.*' --sensors -mailbox.RunningOn -- \
	"$bin/mailbox" >/dev/null 2>"$work/err" || fail "mailbox under record: $(cat "$work/err")"
grep -qF "vigil record: --sensors -mailbox.RunningOn matched no sensor of the recording" \
	"$work/err" || fail "no word on a pattern matching nothing: $(cat "$work/err")"
"$vigil" record -o "$work/pat2" --sensors 'mailbox.*' --sensors '-mailbox.RunningOn.*' -- \
	"$bin/mailbox" >/dev/null 2>"$work/err" || fail "mailbox under record: $(cat "$work/err")"
! grep -q "matched no sensor" "$work/err" || fail "a pattern that matched was reported"

# The README's `vigil record --listen -- PROGRAM &` then `vigil probes --pid $!`: $! is
# vigil record's pid, and the monitor finds the subject it runs.
"$vigil" record --listen -o "$work/srv" -- "$bin/mailbox" --pace 1000 --messages 100000 \
	>/dev/null 2>&1 &
rec=$!
# At once, as a user types it: the monitor waits for the subject to listen.
"$vigil" probes --pid $rec list >"$work/out" 2>"$work/err" ||
	{ kill $rec; fail "probes --pid \$! right after the start: $(cat "$work/err")"; }
kill $rec
wait $rec
grep -q "mailbox.SendMessage" "$work/out" || fail "probes --pid \$! listed: $(cat "$work/out")"
nopid=$(($(cat /proc/sys/kernel/pid_max) + 1)) # never a process
"$vigil" probes --pid $nopid list >/dev/null 2>"$work/err"
[ $? -ne 0 ] && grep -qF "no process $nopid" "$work/err" ||
	fail "--pid of no process: $(cat "$work/err")"
rm -rf "$work"
echo "ok: vigil record's refusals are one line each, and nothing is made for them"
