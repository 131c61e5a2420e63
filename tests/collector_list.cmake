# vigil probes --collector list before any subject: empty, and vigild clean under UBSan.
add_test(NAME collector.list_empty
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/collector/list_empty_test.py)
set_tests_properties(collector.list_empty PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                     TIMEOUT 60 LABELS "sanitize;collector")
