#!/usr/bin/env bash
# Installs the Debian packages vigil builds, tests and benchmarks with, if missing.
# postgresql (server, pgbench) and its server headers: tests/logmodel (logmodel.postgres)
# and bench/logmodel_pg.sh build a logging adapter for it and run it under vigil record.
# redis-server, redis-tools (redis-benchmark, redis-cli): tests/net_record.cmake records a
# real server driven by its own client (net_record.redis). iproute2 (ip netns, veth):
# tests/net_analysis.cmake runs hosts in network namespaces (net_analysis.netns).
# nginx, wrk, curl: tests/net_record.cmake records Debian's nginx with its own configuration
# under wrk (net_record.nginx); bench/nginx_bench.py measures it recorded and unrecorded.
# liburing-dev: net_record.io_uring's subject (io_uring counted, not followed).
# libpq-dev: the PostgreSQL store (src/store: vigil store, vigild --store); tests/store.cmake
# starts the postgresql server. nginx, wrk: a server that drops its privileges (issue 18),
# recorded in its default configuration and loaded by wrk. libssl-dev, openssl: TLS between
# the CLI and vigild (docs/security.md); the tests make their certificates with openssl.
# strace: tests/net_shared.cmake checks every matched pair against the bytes each read and
# write moved (net_shared.jobserver, net_shared.pool).
# openbsd-inetd: a fork-per-connection server (tests/net_fork.cmake, with PostgreSQL):
# inetd accepts, forks and execs the service with the connection as its stdin/stdout.
# libmicrohttpd-dev: vigil ui's server (src/ui). chromium: the page's tests (tests/ui),
# driven by playwright-core from npm. nodejs and npm (Debian's, when no node or npm is on
# the PATH): the page is built with esbuild from ui/package-lock.json (npm ci).
# help2man: the man pages (`make install`, cmake/man.cmake). libelf-dev: vigil reads the
# sensor descriptions embedded in a program (src/cli/embedded.c). python3-pandas: the
# Python module's DataFrames (python/vigil, tests/python).
#
# Quiet: apt-get's output goes to a log file (VIGIL_DEPS_LOG, default
# ${TMPDIR:-/tmp}/vigil-install-deps.log), one progress line per step; on failure the
# log's last lines and its path are printed.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libclang-rt-14-dev libjansson-dev libcmocka-dev
      babeltrace2 python3-bt2 lttng-tools liblttng-ust-dev procps valgrind
      openjdk-17-jdk-headless libsqlite3-dev sqlite3 libdw-dev libelf-dev
      postgresql postgresql-server-dev-all libpq-dev redis-server redis-tools iproute2
      nginx wrk curl liburing-dev strace openbsd-inetd libssl-dev openssl libmicrohttpd-dev
      chromium help2man python3-pandas)
# protobuf-c (libprotobuf-c-dev, protobuf-c-compiler): vigil export --format perfetto
# (tests/export decodes it back with the same library). python3-prometheus-client: the
# parser that tests/export checks vigild --metrics with.
pkgs+=(libprotobuf-c-dev protobuf-c-compiler python3-prometheus-client)
# perl (with perl-modules: JSON::PP, IO::Socket::IP): the generated Perl records and
# writer (vigil gen --lang perl) are run with Debian's perl (tests/lang_writers, lang_xlang).
pkgs+=(perl)
# systemtap-sdt-dev (<sys/sdt.h>): tests/usdt builds a subject with SDT probes of every
# operand form, which vigil usdt list and vigil record --usdt read (docs/usdt.md).
pkgs+=(systemtap-sdt-dev)
# libcapstone-dev: vigil decodes the instructions at USDT sites with capstone to plan the
# jump path's trampolines (src/cli/usdt_plan.c; libvigil itself stays libc-only).
pkgs+=(libcapstone-dev)
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
log=${VIGIL_DEPS_LOG:-${TMPDIR:-/tmp}/vigil-install-deps.log}
: >"$log" || { echo "vigil: cannot write the log $log" >&2; exit 1; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
# step TITLE COMMAND...: one line saying what is done, the command's output to the log.
step() {
  local title=$1
  shift
  printf 'vigil: %s ... ' "$title" >&2
  if "$@" >>"$log" 2>&1 </dev/null; then
    echo "done" >&2
  else
    local rc=$?
    echo "FAILED (exit $rc)" >&2
    tail -n 20 "$log" | sed 's/^/  | /' >&2
    echo "vigil: installing the packages failed; the whole output is in $log" >&2
    exit 1
  fi
}
echo "vigil: installing ${#missing[@]} Debian package(s): ${missing[*]} (apt-get's output: $log)" >&2
step "updating the package lists" $SUDO apt-get update
step "downloading them" $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y \
  --no-install-recommends --download-only "${missing[@]}"
step "installing them" $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y \
  --no-install-recommends "${missing[@]}"
