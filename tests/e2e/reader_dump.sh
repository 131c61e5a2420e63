#!/bin/sh
# `vigil dump` on hand-made traces (reader_mktrace): exact text and JSON output, the
# options, stderr reports, exit codes, and a closed pipe.
# usage: reader_dump.sh PATH/TO/reader_mktrace   (VIGIL_BIN: folder of the vigil binary)
set -u
MK=$1
VIGIL=${VIGIL_BIN:?}/vigil
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
# expect_rc WANT CMD...: runs CMD with stdout in $T/out and stderr in $T/err.
expect_rc() {
	want=$1
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$T/err" >&2; fail "exit $rc, expected $want: $*"; }
}

"$MK" "$T/basic" basic || fail "mktrace basic"

# Every event, merged, one line each.
expect_rc 0 "$VIGIL" dump "$T/basic"
cat >"$T/want" <<'EOF'
2023-11-14 22:13:21.000000000 app/42:42 vg.thread.begin tid=42 gen=0 name="main"
2023-11-14 22:13:21.000000010 app/42:42 vg.entity.create kind="Mailbox" id=4096 gen=1 name="inbox"
2023-11-14 22:13:21.000000020 srv/7:7 tick n=100
2023-11-14 22:13:21.000000050 app/42:43 tick n=1
2023-11-14 22:13:21.000000100 app/42:42 all_types i8=-1 i16=-100 i32=-100000 i64=-10000000000 u8=1 u16=1000 u32=100000 u64=18446744073709551614 d=1.25 s="hello \"world\"\n" blob=<01abff> who=Mailbox#4097.1
2023-11-14 22:13:21.000000100 app/42:43 tick n=2
2023-11-14 22:13:21.000000250 app/42:43 tick n=3
2023-11-14 22:13:21.000000300 app/42:42 all_types i8=-2 i16=-200 i32=-200000 i64=-20000000000 u8=2 u16=2000 u32=200000 u64=18446744073709551613 d=2.25 s="café \001" blob=<01abff> who=inbox
2023-11-14 22:13:21.000000400 app/42:42 empty
2023-11-14 22:13:22.500000000 srv/7:7 tick n=101
2023-11-14 22:13:23.000000000 srv/7:7 tick n=102
EOF
diff -u "$T/want" "$T/out" || fail "text output"
[ "$(cat "$T/err")" = "vigil dump: 11 events (11 shown) from 3 streams in 2 images; 0 events discarded; 0 damaged places" ] ||
	fail "summary: $(cat "$T/err")"

# Relative times and a window: [1.5 s, 2 s] after the first event.
expect_rc 0 "$VIGIL" dump --relative --from 1.5s --to 2000ms "$T/basic"
printf '%s\n' "1.500000000 srv/7:7 tick n=101" "2.000000000 srv/7:7 tick n=102" >"$T/want"
diff -u "$T/want" "$T/out" || fail "window"
expect_rc 0 "$VIGIL" dump --relative --to 100ns "$T/basic"
[ "$(wc -l <"$T/out")" = 6 ] || fail "--to 100ns: $(cat "$T/out")"
expect_rc 0 "$VIGIL" dump --from 250ns --to 300ns "$T/basic"
[ "$(wc -l <"$T/out")" = 2 ] || fail "--from 250ns --to 300ns"

# Names: globs, repeatable.
expect_rc 0 "$VIGIL" dump --name 'vg.*' --name empty "$T/basic"
[ "$(cut -d' ' -f4 "$T/out" | tr '\n' ' ')" = "vg.thread.begin vg.entity.create empty " ] ||
	fail "--name: $(cat "$T/out")"
grep -q "(3 shown)" "$T/err" || fail "--name summary"

# JSON lines.
expect_rc 0 "$VIGIL" dump --json "$T/basic"
/usr/bin/python3 - "$T/out" <<'EOF' || fail "json"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 11, len(lines)
first = lines[0]
assert list(first) == ["ts", "clock", "time", "host", "pid", "proc", "tid", "name", "fields"], list(first)
assert first["ts"] == 1700000001000000000 and first["time"] == "2023-11-14 22:13:21.000000000"
assert first["host"] == "host" and first["pid"] == 42 and first["proc"] == "app"
a = lines[4]["fields"]
assert a["i8"] == -1 and a["i64"] == -10000000000 and a["u64"] == "18446744073709551614", a
assert a["d"] == 1.25 and a["s"] == 'hello "world"\n' and a["blob"] == "01abff", a
assert "_blob_len" not in a
assert a["who"] == {"kind": "Mailbox", "id": 4097, "gen": 1, "name": None}, a["who"]
b = lines[7]["fields"]
assert b["s"] == "caf\u00e9 \u0001" and b["who"]["name"] == "inbox", b
assert lines[8]["fields"] == {}
EOF

# Statistics instead of events.
expect_rc 0 "$VIGIL" dump --stats "$T/basic"
grep -q "^$T/basic/app-42-0: app/42 on host, 2 streams, 8 events, 0 discarded, 0 damaged$" "$T/out" ||
	fail "stats: $(cat "$T/out")"
grep -q "^  $T/basic/srv-7-0/stream-7-0: 3 events, 1 packet, 122 bytes" "$T/out" || fail "stats stream"

# Damage: events still printed, every damaged place on stderr, exit 1.
"$MK" "$T/damaged" damaged || fail "mktrace damaged"
expect_rc 1 "$VIGIL" dump "$T/damaged"
[ "$(grep -c ' extra/9:9 tick' "$T/out")" = 2 ] || fail "events around the damage"
grep -q "^vigil dump: 13 events (13 shown) from 4 streams in 3 images; 0 events discarded; 1 damaged place$" "$T/err" ||
	fail "damage summary: $(cat "$T/err")"
grep -q "^$T/damaged/extra-9-0/stream-9-0: byte 94: bad packet magic 0xc1fc1f3e (expected 0xc1fc1fc1); resumed at byte 188$" "$T/err" ||
	fail "damage line: $(cat "$T/err")"

# Discarded events are always reported, and are not damage.
"$MK" "$T/disc" discarded || fail "mktrace discarded"
expect_rc 0 "$VIGIL" dump --name nothing "$T/disc"
grep -q "^vigil dump: 1234 events discarded in $T/disc/extra-9-0/stream-9-0 (size cap, full disk, or nested in a signal handler)$" "$T/err" ||
	fail "discarded: $(cat "$T/err")"

# A killed subject's trace reads, with its damage.
"$MK" "$T/killed" killed || fail "mktrace killed"
expect_rc 1 "$VIGIL" dump "$T/killed"
grep -q "4096 bytes of zero-filled space after the last packet" "$T/err" || fail "zeros"
grep -q "packet_size of 65536 bytes runs past the end of the file" "$T/err" || fail "past eof"
[ "$(grep -c ' extra/9:' "$T/out")" = 4 ] || fail "killed events"

# A metadata syntax error: path:line:col: message, the other images still read.
printf 'trace {\n\tbyte_order = le\n};\n' >"$T/basic/srv-7-0/metadata"
expect_rc 1 "$VIGIL" dump "$T/basic"
grep -q "^$T/basic/srv-7-0/metadata:3:1: expected ';', got '}'$" "$T/err" || fail "metadata error: $(cat "$T/err")"
[ "$(wc -l <"$T/out")" = 8 ] || fail "other image"
# Nothing readable at all: one clear line, exit 2.
expect_rc 2 "$VIGIL" dump "$T/basic/srv-7-0"
[ "$(cat "$T/err")" = "$T/basic/srv-7-0/metadata:3:1: expected ';', got '}'" ] || fail "unreadable: $(cat "$T/err")"

# Usage errors and unreadable input: one line, exit 2.
mkdir "$T/empty"
for args in "" "--bogus $T/disc" "--from 1x $T/disc" "--from 2s --to 1s $T/disc" \
	"$T/nonexistent" "/etc/hostname" "$T/empty" "--name"; do
	# shellcheck disable=SC2086
	expect_rc 2 "$VIGIL" dump $args
	[ "$(wc -l <"$T/err")" = 1 ] || fail "one line for '$args': $(cat "$T/err")"
	[ -s "$T/out" ] && fail "stdout for '$args'"
done
expect_rc 0 "$VIGIL" dump --help
grep -q "examples:" "$T/out" || fail "help"

# A closed pipe ends quietly.
"$MK" "$T/big" big || fail "mktrace big"
{
	"$VIGIL" dump "$T/big" 2>"$T/pipe-err"
	echo $? >"$T/pipe-rc"
} | head -n 2 >/dev/null
[ "$(cat "$T/pipe-rc")" = 0 ] || fail "EPIPE exit $(cat "$T/pipe-rc")"
[ -s "$T/pipe-err" ] && fail "EPIPE stderr: $(cat "$T/pipe-err")"
echo "reader_dump: ok"
