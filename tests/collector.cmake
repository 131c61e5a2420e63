# The collector vigild (docs/protocol.md): the frame codec (unit test and libFuzzer
# target) and end-to-end runs of a real vigild on a free loopback port
# (tests/collector/collector_test.py).
add_executable(collector_frame_test ${CMAKE_SOURCE_DIR}/tests/collector/frame_test.c)
target_link_libraries(collector_frame_test PRIVATE vigil_wire)
add_test(NAME collector.frame COMMAND collector_frame_test)
set_tests_properties(collector.frame PROPERTIES LABELS "collector;sanitize")

foreach(t help records bad_peers mailbox unix fork_exec control_relay concurrent restart crash
          stopped probes limits foreign send metadata_bomb)
  add_test(NAME collector.${t}
           COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/collector/collector_test.py ${t})
  set_tests_properties(collector.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120
                       LABELS collector SKIP_RETURN_CODE 77)
endforeach()
# vigild itself under the sanitizers: the cases without a preloaded C subject.
set_tests_properties(collector.help collector.records collector.bad_peers collector.limits
                     collector.metadata_bomb
                     PROPERTIES LABELS "collector;sanitize")
# Each C-subject case starts collectors and subjects of its own: not two at once on 2 cores.
set_tests_properties(collector.mailbox collector.unix collector.fork_exec collector.concurrent
                     collector.restart collector.crash collector.foreign collector.send collector.probes
                     collector.stopped PROPERTIES RUN_SERIAL TRUE)

# vigild --store into a real PostgreSQL server (Debian's binaries), as tests/store.cmake.
file(GLOB COLLECTOR_PG_BIN /usr/lib/postgresql/*/bin/initdb)
if(TARGET vigil_store AND COLLECTOR_PG_BIN AND NOT VIGIL_SANITIZE)
  list(GET COLLECTOR_PG_BIN -1 COLLECTOR_PG_BIN)
  get_filename_component(COLLECTOR_PG_BIN ${COLLECTOR_PG_BIN} DIRECTORY)
  add_test(NAME collector.store
           COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/collector/collector_test.py store)
  set_tests_properties(collector.store PROPERTIES
                       ENVIRONMENT "${VIGIL_TEST_ENV};VIGIL_PG_BIN=${COLLECTOR_PG_BIN}"
                       TIMEOUT 120 LABELS collector RUN_SERIAL TRUE)
endif()

# libFuzzer target of the frame decoder (VIGIL_FUZZ=ON, clang). Longer, by hand:
#   build-fuzz/bin/fuzz_frame -max_total_time=600 build-fuzz/tests/corpus_frame \
#       tests/collector/frame_seeds
if(VIGIL_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(FUZZ_FRAME_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_executable(fuzz_frame ${CMAKE_SOURCE_DIR}/tests/collector/fuzz_frame.c
                 ${CMAKE_SOURCE_DIR}/src/wire/frame.c)
  target_include_directories(fuzz_frame PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(fuzz_frame PRIVATE ${FUZZ_FRAME_FLAGS})
  target_link_options(fuzz_frame PRIVATE ${FUZZ_FRAME_FLAGS})
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/corpus_frame)
  add_test(NAME collector_fuzz_frame
           COMMAND fuzz_frame -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                   ${CMAKE_CURRENT_BINARY_DIR}/corpus_frame
                   ${CMAKE_CURRENT_LIST_DIR}/collector/frame_seeds)
  set_tests_properties(collector_fuzz_frame PROPERTIES LABELS "collector;fuzz" TIMEOUT 120)
endif()

# TLS 1.3 between vigil and vigild (docs/security.md), certificates made by the test.
foreach(t server mutual send restart)
  add_test(NAME collector.tls_${t}
           COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/collector/tls_test.py ${t})
  set_tests_properties(collector.tls_${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 180
                       LABELS collector SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()

# What vigild cannot store is counted in the trace: a per-subject quota, a full disk
# (RLIMIT_FSIZE through prlimit). The stalled collector is collector.stopped.
foreach(t quota quota_restart quota_records disk_full)
  add_test(NAME collector.faults_${t}
           COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/collector/faults_test.py ${t})
  set_tests_properties(collector.faults_${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                       TIMEOUT 180 LABELS collector SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endforeach()
# vigild, vigil send and the TLS code under the sanitizers: cases without a preloaded subject.
set_tests_properties(collector.tls_send collector.faults_quota collector.faults_quota_restart
                     collector.faults_quota_records
                     collector.faults_disk_full
                     PROPERTIES LABELS "collector;sanitize")
# Credentials bound to one subject: --subject-tokens (hand-made peers: sanitizers too).
add_test(NAME collector.roles_subject_tokens
         COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/collector/roles_test.py subject_tokens)
set_tests_properties(collector.roles_subject_tokens PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                     TIMEOUT 120 LABELS "collector;sanitize")
