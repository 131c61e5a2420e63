#!/bin/sh
# vigil display as a command: usage errors, a missing file, outputs (a regular file
# replaced whole, /dev/null written in place and left a device, a folder refused), --at
# forms, and `changes`. usage: cli.sh BIN-DIR SRC-DIR
bin=$1 src=$2
vigil=$bin/vigil
vgd=$src/examples/mailbox/mailbox.vgd
work=$(mktemp -d)
status=0
fail() { echo "FAIL: $*"; status=1; }

VIGIL_OUT=$work/trace "$bin/mailbox" --seed 2 >/dev/null || { echo "FAIL: mailbox"; exit 1; }

# expect RC PATTERN -- ARGS: exit status RC, and stderr's last line matches PATTERN
expect() {
	rc=$1 pattern=$2
	shift 3
	"$vigil" display "$@" >"$work/out" 2>"$work/err"
	got=$?
	[ $got = "$rc" ] || fail "vigil display $*: exit $got, expected $rc ($(cat "$work/err"))"
	tail -n 1 "$work/err" | grep -q -- "$pattern" ||
		fail "vigil display $*: stderr $(cat "$work/err"), expected /$pattern/"
}

"$vigil" display --help | grep -q "vigil display render" || fail "--help"
expect 2 "expected check|render|changes" -- check "$vgd"
expect 2 "unknown subcommand 'draw'" -- draw "$vgd" "$work/trace"
expect 2 "not displayed" -- check "$work/none.vgd" "$work/trace"
grep -q "^$work/none.vgd: error: No such file or directory$" "$work/err" || fail "missing file: $(cat "$work/err")"
[ "$(wc -l <"$work/err")" = 2 ] || fail "missing file: more than one error line"
expect 2 "not displayed" -- check "$work" "$work/trace"
grep -q "^$work: error: is a directory$" "$work/err" || fail "folder as .vgd: $(cat "$work/err")"
expect 2 "" -- check "$vgd" "$work/no-trace"
expect 2 "is not a time" -- render "$vgd" "$work/trace" --at soon
expect 2 "is not a time" -- render "$vgd" "$work/trace" --at 101%
expect 2 "options of render" -- check "$vgd" "$work/trace" --json
expect 2 "needs a value" -- render "$vgd" "$work/trace" --at

# before the program runs: against the relations its sensor description gives
"$vigil" display check "$vgd" --sensors "$src/examples/mailbox/mailbox.vgl" >"$work/out" 2>&1 ||
	fail "check --sensors: $(cat "$work/out")"
printf 'show Process as circle\nshow Mailbox as oval: label nmae\n' >"$work/typo.vgd"
expect 2 "not displayed" -- check "$work/typo.vgd" --sensors "$src/examples/mailbox/mailbox.vgl"
grep -q "typo.vgd:2:29: error: Mailbox has no attribute 'nmae'; did you mean name?" "$work/err" ||
	fail "check --sensors of a typo: $(cat "$work/err")"
expect 2 "option of check" -- render "$vgd" --sensors "$src/examples/mailbox/mailbox.vgl"

"$vigil" display check "$vgd" "$work/trace" >"$work/out" 2>"$work/err" || fail "check: $(cat "$work/err")"
grep -q "checked against" "$work/out" || fail "check prints nothing"

# outputs: a regular file replaced whole; /dev/null stays a device; a folder refused
echo old >"$work/scene.svg"
"$vigil" display render "$vgd" "$work/trace" --at 50% -o "$work/scene.svg" || fail "render -o"
head -c 4 "$work/scene.svg" | grep -q "<svg" || fail "scene.svg is not the SVG"
"$vigil" display render "$vgd" "$work/trace" --json -o /dev/null || fail "render -o /dev/null"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
mkdir "$work/dir"
"$vigil" display render "$vgd" "$work/trace" -o "$work/dir" 2>"$work/err" && fail "render -o DIR succeeded"
[ -d "$work/dir" ] || fail "the folder was replaced"

# --at forms agree: 0 is the first event, end and 100% the last, @NS absolute
first=$("$vigil" display render "$vgd" "$work/trace" --at 0 --json | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["first"], s["at"], s["last"])')
set -- $first
[ "$1" = "$2" ] || fail "--at 0 is not the first event ($first)"
for at in end 100% "@$3"; do
	got=$("$vigil" display render "$vgd" "$work/trace" --at "$at" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["at"])')
	[ "$got" = "$3" ] || fail "--at $at gives $got, not the last event $3"
done
# instants far outside the trace are taken at 10^18 ns from it: no overflow, no error
for at in @-9223372036854775807 @9223372036854775807 1000000000s; do
	"$vigil" display render "$vgd" "$work/trace" --at "$at" --json >/dev/null 2>"$work/err" ||
		fail "--at $at: $(cat "$work/err")"
done
expect 2 "is not a time" -- render "$vgd" "$work/trace" --at 9000000000s
printf 'show Process as circle\ntime animationtrace 31536000s hold 31536000s\n' >"$work/long.vgd"
"$vigil" display render "$work/long.vgd" "$work/trace" --at 50% -o "$work/long.svg" 2>"$work/err" ||
	fail "a year's window: $(cat "$work/err")"
# changes: sorted, distinct, within the trace
"$vigil" display changes "$vgd" "$work/trace" >"$work/changes" || fail "changes"
sort -n -u "$work/changes" | cmp -s - "$work/changes" || fail "changes are not sorted and distinct"
[ "$(wc -l <"$work/changes")" -gt 10 ] || fail "fewer than 10 changes"

if [ $status = 0 ]; then rm -rf "$work"; else echo "kept $work"; fi
exit $status
