# Front door: `make demo`, `make test`, `make bench` (`make bench-query`: only its query
# part). Each installs what it needs.
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)

.PHONY: all deps build build-asan build-fuzz demo test bench bench-query bench-watch bench-logmodel format clean

all: build

deps:
	@./scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVIGIL_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)

# libFuzzer targets of the readers (clang): `make test` runs each for 20 s over its seeds.
build-fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DVIGIL_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_metadata fuzz_stream fuzz_vgl fuzz_tquel fuzz_query fuzz_model fuzz_frame

demo: build
	@./examples/mailbox/demo.sh $(BUILD)

# Each build's CTest run goes on when an earlier one failed; the last line counts the tests
# passed, failed and skipped in all three (scripts/test_summary.py), and fails if any failed.
test: build build-asan build-fuzz
	@rm -f $(BUILD)/junit.xml $(FUZZ_BUILD)/junit.xml $(ASAN_BUILD)/junit.xml
	-@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE fuzz --output-junit junit.xml
	-@cd $(FUZZ_BUILD) && ctest --output-on-failure -j $(JOBS) -L fuzz --output-junit junit.xml
	-@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS) -L sanitize --output-junit junit.xml
	@python3 scripts/test_summary.py normal=$(BUILD)/junit.xml fuzz=$(FUZZ_BUILD)/junit.xml \
	    sanitize=$(ASAN_BUILD)/junit.xml

# bench/README.md: vigil against LTTng-UST (run.sh), vigil query against SQLite (query.sh),
# then vigil watch's packets per plan and the control channel's latency (watch.py).
bench: build
	@./bench/run.sh $(BUILD)
	@./bench/query.sh $(BUILD)
	@python3 ./bench/watch.py $(BUILD)
	@$(BUILD)/bench/logcap-bench
	@$(BUILD)/bench/consistency-bench --json $(BUILD)/bench/consistency.json
	@python3 ./bench/logmodel_pg.py $(BUILD)
	@python3 ./bench/probes_bench.py $(BUILD)
	@python3 ./bench/collector_bench.py $(BUILD)

bench-query: build
	@./bench/query.sh $(BUILD)

bench-watch: build
	@python3 ./bench/watch.py $(BUILD)

# pgbench throughput with log capture on and off (bench/README.md, bench/logmodel_pg.py).
bench-logmodel: build
	@python3 ./bench/logmodel_pg.py $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
