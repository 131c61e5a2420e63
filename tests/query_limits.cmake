# TQuel at its bounds (TQUEL_MAX_HEIGHT): over-long chains are one error line with a
# caret, never a stack overflow; chains under the bound answer as the one-term query.
add_test(NAME query.limits COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/query/limits_test.py)
set_tests_properties(query.limits PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 600
                     LABELS sanitize)
