# vigil check (src/check, docs/consistency.md): traces with hand-made violations of each
# sequencing rule, written byte by byte (tests/check/check_mktrace.c over
# tests/unit/reader_tracegen.c, so they do not depend on the runtime's enforcement), checked
# through the real command (tests/check/check_test.py); a random consistent workload of a
# million events with every kind of violation of every rule injected, on fixed seeds and
# one fresh seed (printed; VIGIL_SEED=N reruns it); op names and the hash table against a reference
# (tests/check/check_unit.c). check.record: a subject linked with libvigil writing
# inconsistent streams with VIGIL_CONSISTENCY=off (tests/check/check_subject.c).
add_executable(check_mktrace ${CMAKE_SOURCE_DIR}/tests/check/check_mktrace.c)
target_include_directories(check_mktrace PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(check_mktrace PRIVATE reader_tracegen)

add_executable(test_check_unit ${CMAKE_SOURCE_DIR}/tests/check/check_unit.c)
target_link_libraries(test_check_unit PRIVATE vigil_check)
add_test(NAME check.unit COMMAND test_check_unit)
set_tests_properties(check.unit PROPERTIES LABELS "sanitize;check" TIMEOUT 120)

find_program(CHECK_PYTHON3 python3 HINTS /usr/bin)
foreach(t rules cli)
  add_test(NAME check.${t}
           COMMAND ${CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check/check_test.py ${t}
                   --bin ${CMAKE_BINARY_DIR}/bin --mktrace $<TARGET_FILE:check_mktrace>)
  set_tests_properties(check.${t} PROPERTIES LABELS "sanitize;check" TIMEOUT 120)
endforeach()
# A million events: not under the sanitizers (too slow there to be useful).
if(NOT VIGIL_SANITIZE)
  add_test(NAME check.random
           COMMAND ${CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check/check_test.py random
                   --bin ${CMAKE_BINARY_DIR}/bin --mktrace $<TARGET_FILE:check_mktrace>)
  set_tests_properties(check.random PROPERTIES LABELS check TIMEOUT 300)
endif()

# The runtime and the checker together: naive filtering (VIGIL_CONSISTENCY=off) breaks
# each rule once, consistent reporting none.
add_executable(check_subject ${CMAKE_SOURCE_DIR}/tests/check/check_subject.c)
target_link_libraries(check_subject PRIVATE vigil_runtime Threads::Threads)
add_test(NAME check.record
         COMMAND ${CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check/check_test.py record
                 --bin ${CMAKE_BINARY_DIR}/bin --mktrace $<TARGET_FILE:check_mktrace>
                 --subject $<TARGET_FILE:check_subject>)
set_tests_properties(check.record PROPERTIES LABELS "sanitize;check" TIMEOUT 120
                     ENVIRONMENT "${VIGIL_TEST_ENV}")

# vigil check --deadlocks: the wait-for graph on a subject that really deadlocks (two
# threads, two mutexes, killed by the test once both wait) and on one that takes the
# mutexes in one order (tests/check/deadlock_subject.c).
add_executable(deadlock_subject ${CMAKE_SOURCE_DIR}/tests/check/deadlock_subject.c)
target_link_libraries(deadlock_subject PRIVATE vigil_runtime Threads::Threads)
add_test(NAME check.deadlocks
         COMMAND ${CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check/check_test.py deadlocks
                 --bin ${CMAKE_BINARY_DIR}/bin --mktrace $<TARGET_FILE:check_mktrace>
                 --subject $<TARGET_FILE:deadlock_subject>)
set_tests_properties(check.deadlocks PROPERTIES LABELS "sanitize;check" TIMEOUT 180
                     ENVIRONMENT "${VIGIL_TEST_ENV}")

# The WaitFor relation through TQuel, against the edges computed from the same traces' lock
# events (tests/check/check_test.py waitfor).
add_test(NAME check.waitfor
         COMMAND ${CHECK_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/check/check_test.py waitfor
                 --bin ${CMAKE_BINARY_DIR}/bin --mktrace $<TARGET_FILE:check_mktrace>
                 --subject $<TARGET_FILE:deadlock_subject>)
set_tests_properties(check.waitfor PROPERTIES LABELS "sanitize;check" TIMEOUT 180
                     ENVIRONMENT "${VIGIL_TEST_ENV}")
