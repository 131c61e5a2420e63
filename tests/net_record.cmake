# Interaction networks, the recording side (docs/net.md): vg.net.* events of an
# unmodified subject through vigil record's preload (not under the sanitizers: the
# preload), of the instrumented API linked with libvigil, and of the three-tier example.
add_executable(net_subject ${CMAKE_SOURCE_DIR}/tests/net/record/net_subject.c)
# A send not recorded yet when another thread ends the process, made certain (one CPU,
# a SCHED_IDLE sender).
add_executable(net_exit_race_subject ${CMAKE_SOURCE_DIR}/tests/net/record/exit_race_subject.c)
target_link_libraries(net_exit_race_subject PRIVATE Threads::Threads)
add_executable(net_api_subject ${CMAKE_SOURCE_DIR}/tests/net/record/api_subject.c)
target_link_libraries(net_api_subject PRIVATE vigil_runtime Threads::Threads)
add_executable(net_stdio_subject ${CMAKE_SOURCE_DIR}/tests/net/record/stdio_subject.c)
target_compile_options(net_stdio_subject PRIVATE -O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)
# The same, linked with libvigil (its hooks interpose libc's): runs under the sanitizers.
add_executable(net_stdio_linked ${CMAKE_SOURCE_DIR}/tests/net/record/stdio_subject.c)
target_compile_options(net_stdio_linked PRIVATE -O2 -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)
target_link_libraries(net_stdio_linked PRIVATE vigil_runtime)
find_library(LIBURING uring)
if(LIBURING)
  add_executable(net_uring_subject ${CMAKE_SOURCE_DIR}/tests/net/record/uring_subject.c)
  target_link_libraries(net_uring_subject PRIVATE ${LIBURING})
else()
  message(STATUS "tests: liburing-dev not found: net_record.io_uring will fail")
endif()

foreach(t pipe socketpair dup file tcp unix fork scm stdin tty errno not_recording api host_and_skew
          api_linked_only api_not_recording three_tier_unmodified
          three_tier_instrumented three_tier_linked redis runtime_io stdio stdio_pipelines
          nginx static_exec io_uring stdio_linked stdio_prompt exit_race)
  add_test(NAME net_record.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/net/record/net_record_test.py ${t})
  set_tests_properties(net_record.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120)
endforeach()
# The API linked with libvigil, without a preload: meaningful under the sanitizers.
set_tests_properties(net_record.api_linked_only net_record.api_not_recording
                     net_record.three_tier_linked net_record.stdio_linked
                     PROPERTIES LABELS sanitize)
