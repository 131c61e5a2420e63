#!/bin/sh
# `vigil gen --check` on bad input of every kind: each run ends by itself (no crash, no
# hang: the test has a timeout), exits 1 (0 where the input is fine) and says why.
# usage: robust.sh VIGIL
set -u
VIGIL=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

# expect STATUS TEXT FILE: the run exits with STATUS and its stderr contains TEXT.
expect() {
	status=$1 text=$2 file=$3
	"$VIGIL" gen "$file" --check >"$T/out" 2>"$T/err"
	rc=$?
	if [ -z "$text" ]; then
		found=$([ -s "$T/err" ] && echo no || echo yes) # nothing on stderr
	else
		found=$(grep -qF -- "$text" "$T/err" && echo yes || echo no)
	fi
	if [ "$rc" -ne "$status" ] || [ "$found" = no ]; then
		echo "FAIL: $file: exit $rc (expected $status), stderr lacks '$text':"
		head -c 600 "$T/err"
		fails=$((fails + 1))
	fi
}

head -c 200000 /dev/urandom >"$T/garbage.vgl"
expect 1 "error:" "$T/garbage.vgl"

printf 'record R { uint8 x; }\n\0\0\0\001record S { }' >"$T/nul.vgl"
expect 1 "nul.vgl:2:1: error: unexpected byte 0x00" "$T/nul.vgl"

# 17 MiB: refused before it is read.
head -c 17825792 /dev/zero | tr '\0' ' ' >"$T/huge.vgl"
expect 1 "is larger than 16 MiB" "$T/huge.vgl"

# A large valid file: 20000 records and sensors (must be quick: linear checks).
awk 'BEGIN { print "entity E;"; for (i = 0; i < 20000; i++) {
	printf "record R%d extends Base { uint32 a%d = %d; }\n", i, i, i;
	printf "sensor S%d : event R%d { performer e; }\n", i, i } }' >"$T/big.vgl"
echo 'record Base max 64 { E e; string s max 8 = "x"; }' >>"$T/big.vgl"
expect 0 "" "$T/big.vgl"

# 100000 nested selections, 1000000 braces.
awk 'BEGIN { printf "struct C { C c; }\nrecord R { C c "; for (i = 0; i < 100000; i++) printf "{ c ";
	for (i = 0; i < 100000; i++) printf "} "; print "; }" }' >"$T/deep.vgl"
expect 1 "deep.vgl:2:32: error: selection nested deeper than 4 levels" "$T/deep.vgl"
awk 'BEGIN { for (i = 0; i < 1000000; i++) printf "{"; }' >"$T/braces.vgl"
expect 1 "braces.vgl:1:1: error: expected a declaration" "$T/braces.vgl"

printf 'record R { uint8 x; }\n/* no end' >"$T/comment.vgl"
expect 1 "comment.vgl:2:1: error: unterminated comment" "$T/comment.vgl"
printf 'record R { string s = "no end' >"$T/string.vgl"
expect 1 "string.vgl:1:23: error: unterminated string" "$T/string.vgl"

# Thousands of errors: the first 100, then one line.
awk 'BEGIN { for (i = 0; i < 5000; i++) printf "record R%d { Nope x; }\n", i }' >"$T/many.vgl"
expect 1 "too many errors (5000), only the first 100 shown" "$T/many.vgl"
n=$(grep -c ': error: ' "$T/err")
[ "$n" -eq 101 ] || { echo "FAIL: many.vgl: $n error lines, expected 101"; fails=$((fails + 1)); }

# A long chain of extends.
awk 'BEGIN { print "record R0 { uint8 x; }"; for (i = 1; i < 3000; i++)
	printf "record R%d extends R%d { uint8 x%d; }\n", i, i - 1, i }' >"$T/chain.vgl"
expect 1 "error: extends chain longer than 64 records" "$T/chain.vgl"

# Many records extending one wide record: every record holds its inherited properties, so
# the model's size is bounded (no quadratic time or memory).
awk 'BEGIN { printf "record P {"; for (i = 0; i < 100000; i++) printf " uint8 a%d;", i; print " }";
	for (i = 0; i < 100000; i++) printf "record R%d extends P { }\n", i }' >"$T/wide.vgl"
expect 1 "too many inherited properties in all" "$T/wide.vgl"

# Large selections and many sensors of one record: name look-ups are not linear.
awk 'BEGIN { printf "struct S {"; for (i = 0; i < 100000; i++) printf " uint8 a%d;", i; print " }";
	printf "record R {"; for (i = 0; i < 100000; i++) printf " S s%d { a%d };", i, 99999 - i; print " }";
	printf "entity E; record Q { E e; "; for (i = 0; i < 100000; i++) printf " uint8 b%d;", i; print "}";
	for (i = 0; i < 100000; i++) printf "sensor X%d : event Q { performer e; }\n", i }' >"$T/sel.vgl"
expect 0 "" "$T/sel.vgl"

# A package name of 200000 parts, a name of 100000 bytes.
awk 'BEGIN { printf "package a"; for (i = 0; i < 200000; i++) printf ".b"; print ";" }' >"$T/dots.vgl"
expect 0 "" "$T/dots.vgl"
awk 'BEGIN { printf "entity "; for (i = 0; i < 100000; i++) printf "x"; print ";" }' >"$T/long.vgl"
expect 1 "long.vgl:1:8: error: name longer than 255 bytes" "$T/long.vgl"

# Not regular files: no read that blocks or never ends.
expect 1 "'/dev/zero' is not a regular file" /dev/zero
mkfifo "$T/fifo.vgl"
expect 1 "is not a regular file" "$T/fifo.vgl"
expect 1 "is not a regular file" "$T"
printf 'import "fifo.vgl";\n' >"$T/imp.vgl"
expect 1 "imp.vgl:1:8: error: '$T/fifo.vgl' is not a regular file" "$T/imp.vgl"

# An empty file declares nothing, which is fine.
: >"$T/empty.vgl"
expect 0 "" "$T/empty.vgl"

[ "$fails" -eq 0 ] && echo "robust: all passed"
[ "$fails" -eq 0 ]
