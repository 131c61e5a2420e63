#!/bin/sh
# scripts/install-deps.sh is quiet (issue 28, item 6): with stand-ins for dpkg-query (every
# package missing) and apt-get (a thousand lines of output, then success or failure), it
# prints one line per step, sends apt-get's output to its log, and on failure names the log.
set -u
src=${VIGIL_SRC:?}
dir=$(mktemp -d "${TMPDIR:-/tmp}/vigil-deps-quiet.XXXXXX")
fail() { echo "FAIL: $*"; echo "kept $dir"; exit 1; }
mkdir "$dir/bin"
printf '#!/bin/sh\nexit 1\n' >"$dir/bin/dpkg-query"
cat >"$dir/bin/apt-get" <<'SH'
#!/bin/sh
i=0
while [ $i -lt 1000 ]; do echo "Get:$i apt line for $1"; i=$((i + 1)); done
[ -e "${APT_FAIL_ON:-/nonexistent}" ] && [ "$1" = "${APT_FAIL_STEP:-}" ] && { echo "E: broken"; exit 100; }
exit 0
SH
chmod +x "$dir/bin/dpkg-query" "$dir/bin/apt-get"
export PATH="$dir/bin:$PATH"

# Success: four lines on stderr (what, three steps), nothing on stdout, the output logged.
VIGIL_DEPS_LOG=$dir/ok.log sh -c "bash '$src/scripts/install-deps.sh' >'$dir/ok.out' 2>'$dir/ok.err'" ||
	fail "install-deps.sh exited $? with a succeeding apt-get: $(cat "$dir/ok.err")"
[ ! -s "$dir/ok.out" ] || fail "it printed on stdout: $(head -3 "$dir/ok.out")"
n=$(wc -l <"$dir/ok.err")
[ "$n" -eq 4 ] || fail "expected 4 progress lines, got $n: $(head -8 "$dir/ok.err")"
grep -q "apt-get's output: $dir/ok.log" "$dir/ok.err" || fail "the log's path is not named"
logged=$(grep -c '^Get:' "$dir/ok.log")
[ "$logged" -eq 3000 ] || fail "the log holds $logged of apt-get's 3000 lines"
! grep -q '^Get:' "$dir/ok.err" || fail "apt-get's output reached the terminal"

# Failure at the install step: exit non-zero, the log's path and its last lines shown.
touch "$dir/fail"
APT_FAIL_ON=$dir/fail APT_FAIL_STEP=install VIGIL_DEPS_LOG=$dir/bad.log \
	bash "$src/scripts/install-deps.sh" >"$dir/bad.out" 2>"$dir/bad.err" &&
	fail "install-deps.sh exited 0 although apt-get failed"
grep -q "the whole output is in $dir/bad.log" "$dir/bad.err" || fail "no log path: $(cat "$dir/bad.err")"
grep -q 'E: broken' "$dir/bad.err" || fail "the failure's last lines are not shown"
n=$(wc -l <"$dir/bad.err")
[ "$n" -le 30 ] || fail "$n lines on failure: apt-get's output leaked"
echo "ok: one line per step, apt-get's output in the log, its path on failure"
rm -rf "$dir"
