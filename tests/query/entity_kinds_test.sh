#!/bin/sh
# Entities of two kinds are never equal (docs/tquel.md "Values"): comparing a Process
# attribute with a Mailbox attribute is a type error at bind time, with file:line:col
# and a caret, for '=' and '!='; entities of one kind, and an entity with a string, still
# compare. Before, `W.Process = W.Mailbox` answered (P3, M3): equal ids, other kinds.
# usage: entity_kinds_test.sh (VIGIL_BIN in the environment); meaningful under ASan.
set -u
bin=${VIGIL_BIN:-build/bin}
work=$(mktemp -d /tmp/vigil-entkinds-XXXXXX)
fail() { echo "FAIL: $*"; echo "kept $work"; exit 1; }
mkdir "$work/t"
VIGIL_OUT="$work/t" "$bin/mailbox" --seed 7 >/dev/null 2>&1 || fail "mailbox did not run"
for op in '=' '!='; do
	printf 'range of W is Waiting\nretrieve (W.Process, W.Mailbox) where W.Process %s W.Mailbox\n' "$op" >"$work/q.tq"
	"$bin/vigil" query "$work/t" -f "$work/q.tq" >"$work/out" 2>"$work/err"
	rc=$?
	[ $rc -eq 2 ] || fail "'$op' between kinds exited $rc, expected 2: $(cat "$work/out" "$work/err")"
	[ ! -s "$work/out" ] || fail "'$op' between kinds printed tuples: $(head -3 "$work/out")"
	head -1 "$work/err" | grep -q "^$work/q.tq:2:39: error: cannot compare a Process entity with a Mailbox entity" ||
		fail "'$op': expected the error at 2:39, got: $(cat "$work/err")"
	[ "$(sed -n 3p "$work/err" | tr -d ' ')" = "^" ] || fail "'$op': no caret: $(cat "$work/err")"
done
# One kind: W's mailbox against S's, and an entity against its name, still answer.
printf 'range of W is Waiting\nrange of S is SendMessage\nretrieve (W.Process) where W.Mailbox = S.Mailbox and W.Process != S.Process\n' >"$work/q.tq"
"$bin/vigil" query "$work/t" -f "$work/q.tq" >"$work/out" 2>"$work/err" || fail "one kind: $(cat "$work/err")"
[ -s "$work/out" ] || fail "one kind: no tuples"
printf 'range of W is Waiting\nretrieve (W.Process) where W.Mailbox = "M1"\n' >"$work/q.tq"
"$bin/vigil" query "$work/t" -f "$work/q.tq" >"$work/out" 2>"$work/err" || fail "a name: $(cat "$work/err")"
rm -rf "$work"
echo "ok: entities of two kinds are a type error; one kind and names compare"
