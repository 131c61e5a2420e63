#!/bin/sh
# tests/test_launcher.sh (which every ctest test runs under, tests/CMakeLists.txt): a
# TMPDIR of its own under the caller's, removed afterwards with what the test left in it;
# what the test left running killed and named; exit status and stdin kept; a failed
# test's folder kept on demand. Also that the add_test wrapper puts a test under it and
# passes its arguments exactly.
# Usage: launcher_test.sh LAUNCHER    (run without the launcher: a launcher that lost the
#                                     exit status would pass every test run under it)
#        launcher_test.sh --wrapped "" "a;b"   (run as every test is: the arguments exact)
set -u
fail() { echo "FAIL: $*"; exit 1; }
if [ "${1:-}" = --wrapped ]; then
  [ $# -eq 3 ] && [ -z "$2" ] && [ "$3" = "a;b" ] || fail "arguments not passed exactly: $# [$*]"
  case ${TMPDIR:-} in */vigil-t-*) ;; *) fail "this test has no TMPDIR of its own: ${TMPDIR:-unset}" ;; esac
  echo "ok wrapped"
  exit 0
fi
launcher=$1
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT

# A test that writes a file and an unreadable folder in its TMPDIR, leaves a process
# running and fails with 3.
TMPDIR=$base sh "$launcher" sh -c '
  echo "$TMPDIR" >"$0/seen"
  touch "$TMPDIR/f" && mkdir "$TMPDIR/d" && touch "$TMPDIR/d/g" && chmod 000 "$TMPDIR/d"
  sleep 300 &
  echo $! >"$0/child"
  exit 3' "$base" 2>"$base/err"
rc=$?
[ "$rc" -eq 3 ] || fail "exit status $rc, not the test's 3"
seen=$(cat "$base/seen")
case $seen in "$base"/vigil-t-*) ;; *) fail "the test's TMPDIR $seen is not a fresh folder under $base" ;; esac
[ ! -e "$seen" ] || fail "the test's TMPDIR $seen is left"
child=$(cat "$base/child")
grep -q "test_launcher: killed what the test left running:.* $child " "$base/err" ||
  fail "the process left running ($child) is not named: $(cat "$base/err")"
# SIGKILL was sent before the launcher returned; wait (bounded) for it to take effect
n=0
while [ -e "/proc/$child" ] && [ "$(awk '{print $3}' "/proc/$child/stat" 2>/dev/null)" != Z ]; do
  n=$((n + 1))
  [ "$n" -lt 200 ] || { kill "$child"; fail "the process left running ($child) still runs"; }
  sleep 0.05
done

VIGIL_TEST_KEEP=1 TMPDIR=$base sh "$launcher" sh -c 'echo "$TMPDIR" >"$0/kept"; exit 1' "$base" 2>/dev/null
kept=$(cat "$base/kept")
[ -d "$kept" ] || fail "a failed test's TMPDIR is not kept with VIGIL_TEST_KEEP"
rm -rf "$kept" "$base/kept"
sh "$launcher" sh -c 'exit 77'
[ $? -eq 77 ] || fail "a skip (77) is not kept"
[ "$(echo in | sh "$launcher" cat)" = in ] || fail "the test does not read the launcher's stdin"
sh "$launcher" sh -c '[ "$(ps -o sid= -p $$ | tr -d " ")" = $$ ]' ||
  fail "the test does not lead a session of its own"
[ -z "$(ls -A "$base")" ] || [ "$(ls -A "$base" | tr '\n' ' ')" = "child err seen " ] ||
  fail "the launcher left something under TMPDIR: $(ls -A "$base")"
echo "ok launcher"
