# Consistent partial reporting, end to end (docs/consistency.md, issue 7's validation).
# consistency.fuzz: a seeded subject with real threads taking turns (objects on reused
# addresses, types, nested invocations, contended locks, thread suspend/resume) recorded
# twice per seed, fully and under a random reporting schedule; each partial trace passes
# `vigil check` and is a projection of the full one (tests/consistency/consistency_test.py).
# The negative control records the same schedule with VIGIL_CONSISTENCY=off and expects
# violations. consistency.example: examples/consistency recorded with reporting toggled.
add_executable(consistency_fuzz ${CMAKE_SOURCE_DIR}/tests/consistency/fuzz_main.c
                                ${CMAKE_SOURCE_DIR}/tests/consistency/fuzz_sensors.c)
target_link_libraries(consistency_fuzz PRIVATE vigil_runtime Threads::Threads)

find_program(CONSISTENCY_PYTHON3 python3 HINTS /usr/bin)
# Recordings through `vigil record` and a million events: not under the sanitizers.
if(NOT VIGIL_SANITIZE)
  # fuzz, naive (above); window: timer-driven windows (VIGIL_REPORT_WINDOW), consistent at
  # every edge; kinds: the patent's four kinds (VIGIL_REPORT=types|objects|execution|...);
  # listeners: several listeners at once (VIGIL_LISTENERS), each listener's trace checked
  # and equal to a recording with its filter alone; listeners-bad: bad VIGIL_LISTENERS;
  # listeners-redis: Debian's redis-server under the preload runtime with three listeners.
  foreach(what fuzz naive window kinds listeners listeners-bad listeners-redis)
    add_test(NAME consistency.${what}
             COMMAND ${CONSISTENCY_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/consistency/consistency_test.py
                     ${what} --bin ${CMAKE_BINARY_DIR}/bin --fuzz $<TARGET_FILE:consistency_fuzz>)
    set_tests_properties(consistency.${what} PROPERTIES LABELS consistency TIMEOUT 300)
  endforeach()
  if(TARGET consistency_example)
    add_test(NAME consistency.example
             COMMAND ${CONSISTENCY_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/consistency/consistency_test.py
                     example --bin ${CMAKE_BINARY_DIR}/bin --example $<TARGET_FILE:consistency_example>)
    set_tests_properties(consistency.example PROPERTIES LABELS consistency TIMEOUT 120)
  endif()
endif()
