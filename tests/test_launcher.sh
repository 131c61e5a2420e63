#!/bin/sh
# Runs one ctest test in a temporary folder of its own and cleans up after it.
#
# Usage: test_launcher.sh COMMAND [ARGS...]   (tests/CMakeLists.txt puts it before every
# test's command)
#
# TMPDIR is a fresh folder under the caller's TMPDIR (or /tmp), so whatever the test or
# its programs make there (mkdtemp, tempfile, os.tmpdir(), chromium's profile) goes with
# it: the folder is removed when the test ends, whatever it left inside. The test runs in
# a session of its own (setsid, no terminal); what is still running in that session when
# the test ends is killed and named on stderr (one line; a process that made a session of
# its own escapes). The test's exit status is kept (77, a skip, included; a signal's death
# shows as 128+N). A test killed by ctest's timeout takes this script with it (SIGKILL),
# so its folder then stays; so does a failed test's with VIGIL_TEST_KEEP=1 in the
# environment (`VIGIL_TEST_KEEP=1 ctest -R name`: what a test says it kept, it keeps).
set -u
[ $# -ge 1 ] || { echo "usage: test_launcher.sh COMMAND [ARGS...]" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/vigil-t-XXXXXX") || exit 1
# like /tmp: a test that runs a program as another user (initdb as postgres) reaches it
chmod 1777 "$dir" || exit 1
# Started in the background by a shell without job control, setsid(1) is not a process
# group leader, so it makes the session in place (no fork): $! is the session's id.
exec 3<&0 # the test reads what ctest gives (a background job would read /dev/null)
TMPDIR=$dir setsid "$@" <&3 3<&- &
pid=$!
trap 'kill -TERM -"$pid" 2>/dev/null' INT TERM HUP
while :; do
  wait "$pid"
  rc=$?
  # wait returns early (>128) when a trapped signal arrives; the test is still running
  kill -0 "$pid" 2>/dev/null || break
done
# its session: the process group and any group made inside it (sid = pid, see above)
left=$(ps -o pid= -o comm= --sid "$pid" 2>/dev/null)
if [ -n "$left" ]; then
  echo "test_launcher: killed what the test left running:" $left >&2
  kill -KILL -"$pid" $(echo "$left" | awk '{print $1}') 2>/dev/null
fi
if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ -n "${VIGIL_TEST_KEEP:-}" ]; then
  echo "test_launcher: kept $dir (VIGIL_TEST_KEEP)" >&2
else
  rm -rf "$dir" 2>/dev/null || { chmod -R u+rwX "$dir" 2>/dev/null; rm -rf "$dir"; }
fi
exit "$rc"
