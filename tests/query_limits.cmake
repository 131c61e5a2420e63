# TQuel at its bounds (TQUEL_MAX_HEIGHT): over-long chains are one error line with a
# caret, never a stack overflow; chains under the bound answer as the one-term query.
add_test(NAME query.limits COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/query/limits_test.py)
set_tests_properties(query.limits PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 600
                     LABELS sanitize)

# Entities of two kinds compared: a type error at bind time (docs/tquel.md "Values").
add_test(NAME query.entity_kinds COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/query/entity_kinds_test.sh)
set_tests_properties(query.entity_kinds PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120
                     LABELS sanitize)
