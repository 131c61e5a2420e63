#!/usr/bin/env bash
# `vigil gen --lang c` refuses what the C side cannot take though the front end accepts
# it (a field named by a CTF keyword), says where and why, and writes nothing.
# usage: refused.sh VIGIL CTF_KEYWORD.vgl
set -u
vigil=$1 vgl=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
msg=$("$vigil" gen "$vgl" --lang c -o "$out/gen" 2>&1)
rc=$?
fail() {
	echo "FAIL: $*"
	echo "output: $msg"
	exit 1
}
[ $rc -ne 0 ] || fail "vigil gen exited 0"
grep -q "ctf_keyword.vgl:7:9: record Tick: field 'clock' is a CTF keyword and cannot name a trace field" \
	<<<"$msg" || fail "no message about the field clock"
[ -z "$(ls -A "$out/gen" 2>/dev/null)" ] || fail "files were written: $(ls -A "$out/gen")"
echo "ok: $msg"
