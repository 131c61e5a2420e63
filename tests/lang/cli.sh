#!/bin/sh
# `vigil gen` as a command: usage errors (one line each, exit 2), --help, --check, and
# generation of the mailbox sensors for every language.
# usage: cli.sh VIGIL TESTS_LANG_DIR
set -u
VIGIL=$1
DIR=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# usage_error TEXT ARGS...: exit 2 and exactly one line on stderr, containing TEXT.
usage_error() {
	text=$1
	shift
	"$VIGIL" gen "$@" >"$T/out" 2>"$T/err"
	rc=$?
	lines=$(wc -l <"$T/err")
	if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$text" "$T/err"; then
		fail "gen $*: exit $rc, $lines lines: $(cat "$T/err")"
	fi
}

M=$DIR/good/mailbox.vgl
usage_error "no .vgl file given" --check
usage_error "one .vgl file at a time" "$M" "$M" --check
usage_error "unknown language 'rust'" "$M" --lang rust -o "$T/x"
usage_error "no language given" "$M" -o "$T/x"
usage_error "no output directory given" "$M" --lang c
usage_error "option '--lang' needs a value" "$M" --lang
usage_error "unknown option '--frobnicate'" "$M" --frobnicate

"$VIGIL" gen --help >"$T/out" 2>"$T/err" || fail "--help: exit $?"
grep -q "examples:" "$T/out" || fail "--help has no examples"
grep -q -- "--lang c" "$T/out" || fail "--help does not show --lang"

"$VIGIL" gen "$M" --check -o "$T/unused" >"$T/out" 2>"$T/err" || fail "--check: exit $?"
grep -qF "ok (4 records, 4 sensors)" "$T/out" || fail "--check: $(cat "$T/out")"
[ -e "$T/unused" ] && fail "--check wrote $T/unused"

# A file with errors: exit 1, nothing written.
printf 'record R { Nope x; }\n' >"$T/bad.vgl"
"$VIGIL" gen "$T/bad.vgl" --lang c -o "$T/bad" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] || fail "bad file: exit $rc"
[ -e "$T/bad" ] && fail "bad file: $T/bad was written"
grep -qF "bad.vgl:1:12: error: unknown type 'Nope'" "$T/err" || fail "bad file: $(cat "$T/err")"
grep -qF "vigil gen: $T/bad.vgl: 1 error" "$T/err" || fail "bad file: no summary"

# Every language writes something for the mailbox sensors.
for lang in c python java; do
	"$VIGIL" gen "$M" --lang $lang -o "$T/$lang" >"$T/out" 2>"$T/err" ||
		fail "--lang $lang: exit $?: $(cat "$T/err")"
	[ -n "$(ls "$T/$lang" 2>/dev/null)" ] || fail "--lang $lang wrote nothing"
done

[ "$fails" -eq 0 ] && echo "cli: all passed"
[ "$fails" -eq 0 ]
