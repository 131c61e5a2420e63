# The differential test of the TQuel engine: random traces (tests/query/diff_subject.c)
# and random retrieves, each answered by `vigil query` and by the equivalent SQL in SQLite
# (tests/query/diff_test.py; aggregates, results and clocks: tests/query/diff_agg.py), on
# fixed seeds and one fresh seed, printed (VIGIL_SEED=N reruns it). Recordings by `vigil
# record`: not under the sanitizers.
add_executable(diff_subject ${CMAKE_SOURCE_DIR}/tests/query/diff_subject.c)
target_link_libraries(diff_subject PRIVATE vigil_runtime Threads::Threads)
add_executable(diff_dump ${CMAKE_SOURCE_DIR}/tests/query/diff_dump.c)
target_link_libraries(diff_dump PRIVATE vigil_query PkgConfig::JANSSON)
if(TARGET vigil_derived) # --derived: LogEvent and Transition (docs/tquel.md)
  target_link_libraries(diff_dump PRIVATE vigil_derived)
  target_compile_definitions(diff_dump PRIVATE VIGIL_HAVE_DERIVED)
endif()

find_program(DIFF_PYTHON3 python3 HINTS /usr/bin)
# query_diff_py_test(NAME SCRIPT TIMEOUT s [NO_BIN] [FAILURES] [LABELS l...] [ARGS a...]
#                    [ENVIRONMENT e...]): tests/query/SCRIPT --bin BUILD/bin ARGS, labelled
# query unless LABELS says; FAILURES: each failing case kept in BUILD/query_diff_failures.
function(query_diff_py_test name script)
  cmake_parse_arguments(T "NO_BIN;FAILURES" "TIMEOUT" "LABELS;ARGS;ENVIRONMENT" ${ARGN})
  set(cmd ${DIFF_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/query/${script})
  if(NOT T_NO_BIN)
    list(APPEND cmd --bin ${CMAKE_BINARY_DIR}/bin)
  endif()
  list(APPEND cmd ${T_ARGS})
  if(T_FAILURES)
    list(APPEND cmd --fail-dir ${CMAKE_BINARY_DIR}/query_diff_failures)
  endif()
  if(NOT T_LABELS)
    set(T_LABELS query)
  endif()
  add_test(NAME ${name} COMMAND ${cmd})
  set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
  if(T_ENVIRONMENT)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENVIRONMENT}")
  endif()
endfunction()

if(NOT VIGIL_SANITIZE)
  query_diff_py_test(query.diff.sqlite diff_test.py FAILURES TIMEOUT 300
                     ARGS --seeds 1,2,3 --fresh --queries 100)
  # The derived relations LogEvent and Transition ranged over beside A, B and E.
  if(TARGET vigil_derived)
    query_diff_py_test(query.diff.derived diff_test.py FAILURES TIMEOUT 300 LABELS query derived
                       ARGS --seeds 1 --fresh --queries 80 --derived)
    # The analyses' relations (tests/query/diff_derived.py): random retrieves and
    # aggregates over Network, Message, NetRunning, NetWaiting and OSThread (the three-tier
    # example recorded), Violation and LogEvent (check_mktrace's rule2, rule5), WaitFor and
    # Deadlock (deadlock_subject), against SQLite; a fresh seed each run, printed.
    query_diff_py_test(query.diff.derived_analyses diff_derived.py FAILURES TIMEOUT 300
                       LABELS query derived ENVIRONMENT ${VIGIL_TEST_ENV})
  endif()
  # aggregates, results ranged over and clocks (tests/query/diff_agg.py); --avoid-known
  # skips the engine bugs it found on 2026-11-22 (see its --help)
  # one test a seed, so that a loaded machine runs them side by side
  foreach(seed 1 2 fresh)
    if(seed STREQUAL "fresh")
      set(seed_args --seeds= --fresh)
    else()
      set(seed_args --seeds ${seed})
    endif()
    # A statement's expected answer has its own budget (diff_agg.py --budget, 60 s of CPU
    # time: past it the run fails, naming the statement); the whole run's time follows the
    # recorded trace's sizes, which vary with thread timing (1 s to 250 s seen on 2026-11-27 under load).
    query_diff_py_test(query.diff.aggregates.${seed} diff_agg.py FAILURES TIMEOUT 600
                       ARGS ${seed_args} --queries 60)
  endforeach()
  # The per-statement budget above counts CPU time: waiting is not failed, computing past
  # it is (tests/query/diff_budget_test.py).
  query_diff_py_test(query.diff.budget diff_budget_test.py NO_BIN TIMEOUT 120)
  # Integer overflow fails the statement, never wraps (tests/query/overflow_test.py): each
  # operator, -2^63 / -1, uints past 2^63 - 1, where clauses, joins' keys, aggregates'
  # arguments and sums, with the line and caret; the bounds themselves answered exactly.
  query_diff_py_test(query.overflow overflow_test.py TIMEOUT 300)
endif()
# The same random retrieves compiled to SQL on the PostgreSQL store (docs/tquel-sql.md):
# each seed's trace stored by `vigil store`, its statements answered by `vigil query
# postgresql://...` and compared as sets with the trace's answers and SQLite's, on a
# server of Debian's the test starts itself (a Unix socket in its temporary directory).
file(GLOB DIFF_PG_BIN /usr/lib/postgresql/*/bin/initdb)
if(TARGET vigil_store AND NOT VIGIL_SANITIZE AND DIFF_PG_BIN)
  list(GET DIFF_PG_BIN -1 DIFF_PG_BIN)
  get_filename_component(DIFF_PG_BIN ${DIFF_PG_BIN} DIRECTORY)
  query_diff_py_test(query.diff.postgres diff_test.py FAILURES TIMEOUT 300 LABELS query store
                     ARGS --seeds 1,2 --fresh --queries 100 --pg ${DIFF_PG_BIN})
  # the aggregates (diff_agg.py): each aggregate statement and each statement over clocks
  # on the store equal to the trace's answer (stdev and varts to the last bit)
  query_diff_py_test(query.diff.aggregates.postgres diff_agg.py FAILURES TIMEOUT 900
                     LABELS query store ARGS --seeds= --fresh --queries 15 --pg ${DIFF_PG_BIN})
  # the same overflows on the store: PostgreSQL's bigint out of range, said as vigil's
  # integer overflow; the answers that do not overflow equal the trace's
  query_diff_py_test(query.overflow.postgres overflow_test.py TIMEOUT 300 LABELS query store
                     ARGS --pg ${DIFF_PG_BIN})
endif()
if(NOT VIGIL_SANITIZE)
  # The relations cache (tests/query/cache_test.py): answers from the cache equal the
  # trace's (diff_test.py's random retrieves again, warm), a trace grown or damaged after
  # caching answers anew, a read-only trace directory caches in the cache directory, a
  # damaged cache file (manifest or relation's) is said in one line and rebuilt, never
  # trusted, a partial cache adds relations as queries name them, and queries at once on
  # one trace leave whole files.
  query_diff_py_test(query.cache cache_test.py TIMEOUT 900)
  # The relations cache keyed on the vigil build's GNU build id
  # (tests/query/cache_key_test.py): vigil under valgrind reads vigil's cache warm, a copy
  # with another build id does not. (valgrind: scripts/install-deps.sh)
  query_diff_py_test(query.cache_key cache_key_test.py TIMEOUT 300)
  # Columns spilled past the build's memory budget (tests/query/spill_test.py): with
  # VIGIL_BUILD_MEMORY=0 retrieves answer as with the heap's columns, byte for byte, at 1
  # and 2 threads, without a cache and through a cache written from spilled columns; a bad
  # budget and an unmakeable spill directory are one line each. (Under ASan:
  # query.build_parallel.)
  query_diff_py_test(query.spill spill_test.py TIMEOUT 300)
  # Operator state against the query's memory budget (tests/query/memory_test.py): a hash
  # join, an aggregate and a scan answer under VIGIL_QUERY_MEMORY = their peak and are
  # refused, one line and exit 2, one byte under it (1 thread); at 2 threads every budget
  # gives the unbounded answer or that line; a bad budget is one line.
  query_diff_py_test(query.memory memory_test.py TIMEOUT 300)
  # Hash joins and aggregates past the query's memory budget
  # (tests/query/spill_ops_test.py): partitioned to spill files, the unbounded answer at 1,
  # 2 and 4 threads (skewed and null keys, thousands of groups, an average), the partitions
  # shared among the workers; one key or one group past the budget refused, one line; no
  # file left, also after a killed run.
  query_diff_py_test(query.spill_ops spill_ops_test.py TIMEOUT 600)
endif()
