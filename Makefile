# Front door: `make demo`, `make test`, `make bench` (`make bench-query`: only its query
# part; `make bench-smoke`: every benchmark at a tiny size, which `make test` runs too).
# Each installs what it needs.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
RELEASE_BUILD ?= build-release
CLANG_BUILD ?= build-clang
JOBS ?= $(shell nproc)
PREFIX ?= /usr/local

.PHONY: all deps install build build-asan build-fuzz build-release build-clang demo test bench bench-smoke bench-query bench-scale bench-watch bench-logmodel bench-models bench-nginx format clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# Every build type builds: optimizing gcc and clang see warnings the others do not
# (maybe-uninitialized, loop analysis). `make test` compiles both; their tests are the
# normal build's.
build-release: deps
	@cmake -S . -B $(RELEASE_BUILD) -DCMAKE_BUILD_TYPE=Release -DVIGIL_BUILD_PAGE=OFF >/dev/null
	@cmake --build $(RELEASE_BUILD) -j $(JOBS) >/dev/null

build-clang: deps
	@CC=clang cmake -S . -B $(CLANG_BUILD) -DCMAKE_BUILD_TYPE=Release -DVIGIL_BUILD_PAGE=OFF >/dev/null
	@cmake --build $(CLANG_BUILD) -j $(JOBS) >/dev/null

# libFuzzer targets of the readers (clang): `make test` runs each for 20 s over its seeds.
build-fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVIGIL_FUZZ=ON -DVIGIL_BUILD_PAGE=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_metadata fuzz_stream fuzz_summary fuzz_vgl fuzz_tquel fuzz_query fuzz_model fuzz_frame fuzz_vgd fuzz_netjson fuzz_sdt

# `make install [PREFIX=/usr/local] [DESTDIR=stage]` (docs/install.md): vigil, vigild,
# libvigil.so.0, headers, vigil.pc, man pages, bash completion, vigild.service, Python module.
install: build
	@cmake -S . -B $(BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) >/dev/null
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

# The demo is what a first run shows: apt-get's output goes to a log (install-deps.sh),
# the build's to BUILD/build.log (its last lines and the log's path if it fails).
demo: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@echo "vigil: building (output: $(BUILD)/build.log) ..." >&2
	@cmake --build $(BUILD) -j $(JOBS) >$(BUILD)/build.log 2>&1 || { tail -n 30 $(BUILD)/build.log >&2; \
	    echo "vigil: the build failed; its whole output is in $(BUILD)/build.log" >&2; exit 1; }
	@./examples/mailbox/demo.sh $(BUILD)

# Each build's CTest run goes on when an earlier one failed; a failed test runs once more
# alone (scripts/run-ctest.sh). The last line counts the tests passed, failed and skipped in
# all three (scripts/test_summary.py), names those that passed only alone (flaky), and fails
# if any failed twice.
test: build build-asan build-fuzz build-release build-clang
	-@JOBS=$(JOBS) scripts/run-ctest.sh $(BUILD) -LE fuzz
	-@JOBS=$(JOBS) scripts/run-ctest.sh $(FUZZ_BUILD) -L fuzz
	-@JOBS=$(JOBS) scripts/run-ctest.sh $(ASAN_BUILD) -L sanitize
	@python3 scripts/test_summary.py normal=$(BUILD)/junit.xml fuzz=$(FUZZ_BUILD)/junit.xml \
	    sanitize=$(ASAN_BUILD)/junit.xml

# bench/README.md: every benchmark listed in bench/all.py (vigil against LTTng-UST, vigil
# query against SQLite, watch, log capture, ...), then one summary of the figures README.md
# quotes with their budgets (also BUILD/bench/summary.json).
bench: build
	@python3 ./bench/all.py $(BUILD)

# The same benchmarks at a tiny size: each must finish and its answers agree (CTest label
# bench, in `make test` too); timings are never judged.
bench-smoke: build
	@python3 ./bench/all.py $(BUILD) --smoke

bench-query: build
	@./bench/query.sh $(BUILD)

# The 1B-event run (bench/scale_bench.py --lock; not in `make bench`: about an hour and
# 40 GB of disk at its default BENCH_SCALE_EVENTS=1000000000).
bench-scale: build
	@python3 ./bench/scale_bench.py $(BUILD) --lock --events $${BENCH_SCALE_EVENTS:-1000000000}

bench-watch: build
	@python3 ./bench/watch.py $(BUILD)

# pgbench throughput with log capture on and off (bench/README.md, bench/logmodel_pg.py).
bench-logmodel: build
	@python3 ./bench/logmodel_pg.py $(BUILD)

# Precision of behaviour models of stock PostgreSQL (scenarios x variations x repeats,
# bench/models_bench.py), then the quality of message templates on real logs.
bench-models: build
	@python3 ./bench/models_bench.py $(BUILD)
	@python3 ./bench/templates_quality.py $(BUILD)

# nginx recorded against unrecorded under wrk, and stdio's cost per followed call
# (bench/nginx_bench.py; --smoke or VIGIL_BENCH_SMOKE=1: one short round).
bench-nginx: build
	@python3 ./bench/nginx_bench.py $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(RELEASE_BUILD) $(CLANG_BUILD)
