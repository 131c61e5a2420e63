#!/bin/sh
# `vigil recover` on hand-made traces: a killed subject's trace becomes whole (for vigil
# and for babeltrace2), no event is lost, a dry run changes nothing, damage inside a
# stream is left and reported.
# usage: reader_recover.sh PATH/TO/reader_mktrace   (VIGIL_BIN: folder of the vigil binary)
set -u
MK=$1
VIGIL=${VIGIL_BIN:?}/vigil
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
expect_rc() {
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$T/out" "$T/err" >&2; fail "exit $rc, expected $want: $*"; }
}
. "${VIGIL_SRC:?}/tests/deps/lib.sh"
# Without babeltrace2 the rest still runs, and the test ends skipped (or failed with CI=true).
have_bt2() { command -v babeltrace2 >/dev/null 2>&1; }

"$MK" "$T/k" killed || fail "mktrace"
expect_rc 1 "$VIGIL" dump "$T/k"
cp "$T/out" "$T/events-before"
if have_bt2; then
	babeltrace2 "$T/k" >/dev/null 2>&1 && fail "babeltrace2 accepted the killed trace"
fi
ls -l "$T/k"/*/ >"$T/sizes-before"

expect_rc 0 "$VIGIL" recover --dry-run "$T/k"
grep -q "stream-9-0: would remove 4096 zero bytes after the last packet (4204 -> 108 bytes)" "$T/out" ||
	fail "dry run: $(cat "$T/out")"
grep -q "stream-10-0: last packet at byte 0: would set packet_size 65536 -> 208 bytes" "$T/out" ||
	fail "dry run: $(cat "$T/out")"
grep -q "2 changes (dry run: none made); 0 problems left" "$T/out" || fail "dry summary"
ls -l "$T/k"/*/ >"$T/sizes-dry"
cmp -s "$T/sizes-before" "$T/sizes-dry" || fail "a dry run changed files"

expect_rc 0 "$VIGIL" recover "$T/k"
grep -q "stream-9-0: removed 4096 zero bytes after the last packet (4204 -> 108 bytes)" "$T/out" ||
	fail "recover: $(cat "$T/out")"
grep -q "vigil recover: $T/k: 3 images, 5 streams; 2 changes; 0 problems left" "$T/out" ||
	fail "summary: $(cat "$T/out")"
expect_rc 0 "$VIGIL" dump "$T/k"
diff -u "$T/events-before" "$T/out" || fail "events changed"
if have_bt2; then
	babeltrace2 "$T/k" >"$T/bt2" 2>"$T/bt2-err" || fail "babeltrace2: $(cat "$T/bt2-err")"
	[ "$(wc -l <"$T/bt2")" = "$(wc -l <"$T/out")" ] || fail "babeltrace2 event count"
fi
expect_rc 0 "$VIGIL" recover "$T/k"
grep -q "0 changes; 0 problems left" "$T/out" || fail "second run: $(cat "$T/out")"

# Damage inside a stream is left as it is: exit 1.
"$MK" "$T/d" damaged || fail "mktrace"
expect_rc 1 "$VIGIL" recover "$T/d"
grep -q "stream-9-0: 1 damaged place inside the stream left as they are" "$T/out" ||
	fail "inner damage: $(cat "$T/out")"

# Usage errors: exit 2, one line.
for args in "" "--bogus $T/k" "$T/k $T/d" "$T/nonexistent"; do
	# shellcheck disable=SC2086
	expect_rc 2 "$VIGIL" recover $args
	[ "$(wc -l <"$T/err")" = 1 ] || fail "one line for '$args'"
done
expect_rc 0 "$VIGIL" recover --help
grep -q "examples:" "$T/out" || fail "help"
have_bt2 || vigil_missing "babeltrace2 (its checks of the recovered trace were not made)"
echo "reader_recover: ok"
