#!/usr/bin/env bash
# Bad options of the mailbox example: exit 2, exactly one line on stderr, nothing on
# stdout. --help: exit 0 with usage and examples. An unwritable truth file: exit 1, one line.
# usage: mailbox_bad_options.sh MAILBOX
set -u
mailbox=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0

expect() { # expected-status args...
	local want=$1
	shift
	"$mailbox" "$@" >"$work/out" 2>"$work/err"
	local got=$? lines
	lines=$(wc -l <"$work/err")
	if [ "$got" != "$want" ] || [ "$lines" != 1 ] || [ -s "$work/out" ] ||
		! grep -q '^mailbox: ' "$work/err"; then
		echo "FAIL: mailbox $*: status $got (want $want), $lines stderr line(s):"
		cat "$work/err" "$work/out"
		fail=1
	fi
}

expect 2 --bogus
expect 2 --bogus=1
expect 2 stray
expect 2 --processors
expect 2 --processors 0
expect 2 --processors 65
expect 2 --processors=2x
expect 2 --processes ''
expect 2 --processes -3
expect 2 --mailboxes 0
expect 2 --messages 1000001
expect 2 --messages 5 --processes 1
expect 2 --quantum 0
expect 2 --seed -1
expect 2 --seed 9223372036854775808
expect 2 --seed 12abc
expect 2 --truth=
expect 1 --truth "$work/no/such/dir/truth.json"

if ! "$mailbox" --help >"$work/out" 2>"$work/err" || [ -s "$work/err" ] ||
	! grep -q '^usage: mailbox' "$work/out" || ! grep -q '^examples:' "$work/out"; then
	echo "FAIL: mailbox --help"
	cat "$work/out" "$work/err"
	fail=1
fi
exit $fail
