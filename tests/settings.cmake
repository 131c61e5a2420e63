# Runtime settings with bad values on a real subject: one line each, the subject runs.
add_test(NAME runtime.settings COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/settings_test.py)
set_tests_properties(runtime.settings PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120
                     LABELS sanitize)

# Threads continue across exec in relations, queries and models (Debian's dash, sleep).
add_test(NAME runtime.exec_threads COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/exec_threads_test.py)
set_tests_properties(runtime.exec_threads PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120)

# vigil record's refusals before it records: one line each, nothing made.
add_test(NAME record.cli COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/e2e/record_cli_test.sh)
set_tests_properties(record.cli PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 60)

# A disk full before threads' first packets: every loss counted in the trace (root: a tmpfs).
add_test(NAME runtime.disk_full COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/disk_full_test.py)
set_tests_properties(runtime.disk_full PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120
                     SKIP_RETURN_CODE 77)

# The README's runnable examples as written, in order, each answering something.
add_test(NAME readme.examples COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/readme_test.py)
set_tests_properties(readme.examples PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)

# The examples of every --help text and of docs/*.md as written (placeholders named, skipped).
add_test(NAME help.examples COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/examples_test.py)
set_tests_properties(help.examples PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 600)

# Printed paths stay: a subject under vigil watch or vigil record --to names no removed trace.
add_test(NAME record.paths COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/paths_test.py)
set_tests_properties(record.paths PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)

# The guard of tests that run VIGIL_TO subjects (tests/spool_guard.py) fails a test that
# leaves a default spool of its own, and only then.
add_test(NAME runtime.spool_guard COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/e2e/spool_guard_test.sh)
set_tests_properties(runtime.spool_guard PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120
                     LABELS sanitize)

# The house's include rules against docs/architecture.md's rooms table (tests/house): no
# undeclared room dependency, no other room's private header or .c file, no circle; and
# the checker itself finds each kind of broken rule in a made-up house.
add_test(NAME house.includes COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/house/include_rules.py)
set_tests_properties(house.includes PROPERTIES TIMEOUT 60)
add_test(NAME house.includes_selftest
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/house/include_rules.py --self-test)
set_tests_properties(house.includes_selftest PROPERTIES TIMEOUT 60)
