# Sourced by the tests' shell scripts: what a test does when something it needs is not
# installed. Under CI=true that is a failure (make deps installs everything); elsewhere
# the test says what it skipped and exits 77, CTest's SKIP_RETURN_CODE for these tests.
# usage: vigil_missing WHAT   (exits)
vigil_missing() {
	if [ "${CI:-}" = true ]; then
		echo "FAIL: $1 is not installed (CI=true: a missing test dependency is an error; make deps installs it)" >&2
		exit 1
	fi
	echo "SKIP: $1 is not installed (make deps installs it)"
	exit 77
}
