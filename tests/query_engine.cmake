# The TQuel engine through `vigil query` and `vigil explain` on a recording of the mailbox
# example: plans, aggregates, results ranged over, --into SQLite, bad input, damage
# (tests/query/engine_cli.py). Recordings use the preload shim: not under the sanitizers.
if(NOT VIGIL_SANITIZE)
  find_program(ENGINE_PYTHON3 python3 HINTS /usr/bin)
  add_test(NAME query.engine.cli
           COMMAND ${ENGINE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/query/engine_cli.py
                   ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(query.engine.cli PROPERTIES LABELS query TIMEOUT 300)
  # as of (transaction time): the trace as recorded up to an instant, checked tuple by
  # tuple on a recording of diff_subject (tests/query/asof_test.py), and its refusals
  add_test(NAME query.asof
           COMMAND ${ENGINE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/query/asof_test.py
                   ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(query.asof PROPERTIES LABELS query TIMEOUT 300)
endif()
# Parallel execution: the same statements at 1 to 4 threads give the same relations, tuple
# for tuple in order (tests/query/parallel_unit.c, a trace built byte by byte); under ASan
# in the sanitize build, and with the executor's files under ThreadSanitizer
# (query.parallel.tsan) where the compiler has it.
add_executable(test_query_parallel ${CMAKE_SOURCE_DIR}/tests/query/parallel_unit.c)
target_include_directories(test_query_parallel PRIVATE ${CMAKE_SOURCE_DIR}/src
                           ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(test_query_parallel PRIVATE vigil_query reader_tracegen)
add_test(NAME query.parallel COMMAND test_query_parallel)
set_tests_properties(query.parallel PROPERTIES LABELS "sanitize;query" TIMEOUT 600)
# Past the query's memory budget (parallel_unit.c --spill): spilled hash joins' and
# aggregates' partitions on the workers, the same answers and aggregates' relations at 1
# to 4 threads; at 256K every statement spills, at 1M the aggregates take each worker's
# share of the room (more partitions at more threads).
foreach(budget 256K 1M)
  add_test(NAME query.parallel.spill_${budget} COMMAND test_query_parallel --spill ${budget})
  set_tests_properties(query.parallel.spill_${budget} PROPERTIES LABELS "sanitize;query"
                       TIMEOUT 300)
endforeach()
# The database built at 1, 2, 3 and 8 threads is the same, byte for byte in a dump of every
# relation (tests/query/build_parallel_unit.c: two images of three streams each); an event
# relation left unmerged for the cache's writer gathers from any tuple on as merged, and
# settled, or written to the cache and mapped (cold, then warm), is the same; under
# ThreadSanitizer too (query.build_parallel.tsan), where the compiler has it.
add_executable(test_build_parallel ${CMAKE_SOURCE_DIR}/tests/query/build_parallel_unit.c)
target_include_directories(test_build_parallel PRIVATE ${CMAKE_SOURCE_DIR}/src
                           ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(test_build_parallel PRIVATE vigil_relations reader_tracegen)
add_test(NAME query.build_parallel COMMAND test_build_parallel)
set_tests_properties(query.build_parallel PROPERTIES LABELS "sanitize;query" TIMEOUT 300)
# A build under a query's time bound gives the whole build's relations, the bounded event
# relation cut to its bound, intervals straddling passed-over packets intact, a synthesized
# event after a marker kept, damage the same (tests/query/build_bounds_unit.c).
add_executable(test_build_bounds ${CMAKE_SOURCE_DIR}/tests/query/build_bounds_unit.c)
target_include_directories(test_build_bounds PRIVATE ${CMAKE_SOURCE_DIR}/src
                           ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(test_build_bounds PRIVATE vigil_relations reader_tracegen)
add_test(NAME query.build_bounds COMMAND test_build_bounds)
set_tests_properties(query.build_bounds PROPERTIES LABELS "sanitize;query" TIMEOUT 300)
# Packet summaries: packets holding none of the events a build reads passed over whole,
# the same answers; a damaged, stale or lying summary (tests/query/packet_summary_unit.c).
add_executable(test_packet_summary ${CMAKE_SOURCE_DIR}/tests/query/packet_summary_unit.c)
target_include_directories(test_packet_summary PRIVATE ${CMAKE_SOURCE_DIR}/src
                           ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(test_packet_summary PRIVATE vigil_relations reader_tracegen)
add_test(NAME query.packet_summary COMMAND test_packet_summary)
set_tests_properties(query.packet_summary PROPERTIES LABELS "sanitize;query" TIMEOUT 120)
# Positions in packet summaries: a rare relation, and an interval relation of 14% of the
# events, in every packet read by their positions, the same answers as with summaries of
# the first format, of the second, and without; a damaged, a moved, an unreadable and a
# missing position (tests/query/summary_positions_unit.c).
add_executable(test_summary_positions ${CMAKE_SOURCE_DIR}/tests/query/summary_positions_unit.c)
target_include_directories(test_summary_positions PRIVATE ${CMAKE_SOURCE_DIR}/src
                           ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(test_summary_positions PRIVATE vigil_relations reader_tracegen)
add_test(NAME query.summary_positions COMMAND test_summary_positions)
set_tests_properties(query.summary_positions PROPERTIES LABELS "sanitize;query" TIMEOUT 120)
# The relations cache's copy decision (src/relations/cache_copy.c): VIGIL_CACHE_COPY=on
# and off honoured, the cheapest of the timed stretches decides and one preempted stretch
# does not make it copy (tests/query/cache_copy_unit.c: timings injected and a fake clock).
add_executable(test_cache_copy ${CMAKE_SOURCE_DIR}/tests/query/cache_copy_unit.c)
target_include_directories(test_cache_copy PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(test_cache_copy PRIVATE vigil_relations)
add_test(NAME query.cache_copy COMMAND test_cache_copy)
set_tests_properties(query.cache_copy PROPERTIES LABELS "sanitize;query" TIMEOUT 60)
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_FLAGS -fsanitize=thread)
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=thread)
check_c_source_compiles("int main(void) { return 0; }" VIGIL_HAVE_TSAN)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(VIGIL_HAVE_TSAN AND NOT VIGIL_SANITIZE)
  # The files that run on the workers, instrumented; the rest of vigil_query (reading the
  # trace, binding, planning: the calling thread only) from the library as it is.
  file(GLOB PARALLEL_TSAN_SOURCES ${CMAKE_SOURCE_DIR}/src/query/exec*.c)
  add_executable(test_query_parallel_tsan ${CMAKE_SOURCE_DIR}/tests/query/parallel_unit.c
                 ${PARALLEL_TSAN_SOURCES} ${CMAKE_SOURCE_DIR}/src/query/engine.c
                 ${CMAKE_SOURCE_DIR}/src/query/result.c ${CMAKE_SOURCE_DIR}/src/query/result_direct.c
                 ${CMAKE_SOURCE_DIR}/src/query/value.c
                 ${CMAKE_SOURCE_DIR}/src/query/agg.c ${CMAKE_SOURCE_DIR}/src/query/agg_time.c
                 ${CMAKE_SOURCE_DIR}/src/common/pool.c)
  target_include_directories(test_query_parallel_tsan PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_compile_options(test_query_parallel_tsan PRIVATE -fsanitize=thread -O1 -g)
  target_compile_definitions(test_query_parallel_tsan PRIVATE PARALLEL_SCALE=1)
  target_link_options(test_query_parallel_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_query_parallel_tsan PRIVATE vigil_query reader_tracegen)
  # The builders' files and the event source's decoding workers, instrumented.
  add_executable(test_build_parallel_tsan ${CMAKE_SOURCE_DIR}/tests/query/build_parallel_unit.c
                 ${CMAKE_SOURCE_DIR}/src/relations/build_parallel.c
                 ${CMAKE_SOURCE_DIR}/src/relations/build_streams.c
                 ${CMAKE_SOURCE_DIR}/src/relations/build.c ${CMAKE_SOURCE_DIR}/src/relations/feed.c
                 ${CMAKE_SOURCE_DIR}/src/relations/pool.c ${CMAKE_SOURCE_DIR}/src/relations/keys.c
                 ${CMAKE_SOURCE_DIR}/src/relations/open.c ${CMAKE_SOURCE_DIR}/src/relations/store.c
                 ${CMAKE_SOURCE_DIR}/src/trace/prefetch.c ${CMAKE_SOURCE_DIR}/src/trace/merge.c)
  target_include_directories(test_build_parallel_tsan PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_compile_options(test_build_parallel_tsan PRIVATE -fsanitize=thread -O1 -g)
  target_link_options(test_build_parallel_tsan PRIVATE -fsanitize=thread)
  target_link_libraries(test_build_parallel_tsan PRIVATE vigil_relations reader_tracegen)
  add_test(NAME query.build_parallel.tsan COMMAND test_build_parallel_tsan)
  set_tests_properties(query.build_parallel.tsan PROPERTIES LABELS query TIMEOUT 300
                       ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 exitcode=66")
  add_test(NAME query.parallel.tsan COMMAND test_query_parallel_tsan)
  set_tests_properties(query.parallel.tsan PROPERTIES LABELS query TIMEOUT 600
                       ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 exitcode=66")
  # the spilled operators' workers (exec_hash_spill.c, exec_agg_spill.c, agg.c) too
  foreach(budget 256K 1M)
    add_test(NAME query.parallel.spill_${budget}.tsan
             COMMAND test_query_parallel_tsan --spill ${budget})
    set_tests_properties(query.parallel.spill_${budget}.tsan PROPERTIES LABELS query
                         TIMEOUT 600 ENVIRONMENT "TSAN_OPTIONS=halt_on_error=1 exitcode=66")
  endforeach()
endif()
