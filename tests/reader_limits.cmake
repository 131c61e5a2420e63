# The metadata reader in linear memory: 20k event declarations, 10k env blocks and 5k
# clocks appended to a real trace's metadata (tests/e2e/reader_limits.py prints the RSS).
add_test(NAME reader_limits.metadata
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/reader_limits.py)
set_tests_properties(reader_limits.metadata PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                     LABELS "sanitize;reader" TIMEOUT 300)

# A 50 GB hole at the end of a stream is reported and recovered without being read.
add_test(NAME reader_limits.sparse
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/reader_limits.py sparse)
set_tests_properties(reader_limits.sparse PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                     LABELS "sanitize;reader" TIMEOUT 300)
