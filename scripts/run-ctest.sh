#!/usr/bin/env bash
# One build's CTest run for `make test`: BUILD_DIR then ctest's selection (-L/-LE ...).
# Tests run in parallel (junit.xml); those that failed run once more, one at a time
# (junit-rerun.xml). scripts/test_summary.py reports a test that passed only alone as
# flaky, by name, so it is seen and fixed; a test that fails twice fails the suite.
set -u
dir=$1
shift
cd "$dir" || exit 1
rm -f junit.xml junit-rerun.xml
if ctest --output-on-failure -j "${JOBS:-$(nproc)}" "$@" --output-junit junit.xml; then
	exit 0
fi
[ -f junit.xml ] || exit 1
echo "run-ctest: running the failed tests of $dir again, one at a time" >&2
ctest --output-on-failure -j 1 --rerun-failed --output-junit junit-rerun.xml
