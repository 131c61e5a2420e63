#!/bin/sh
# The CTest test standing for a missing test dependency (tests/deps/deps.cmake): skipped
# (77), or failed under CI=true, where every dependency must be there.
# usage: missing.sh MESSAGE
if [ "${CI:-}" = true ]; then
	echo "FAIL: $1 (CI=true: a missing test dependency is an error)" >&2
	exit 1
fi
echo "SKIP: $1"
exit 77
