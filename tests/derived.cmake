# Derived relations (docs/tquel.md "Derived relations", src/derived): each against the
# output it replaces (vigil net split, vigil net report, vigil check) on recordings of the
# three-tier example and of redis-server from Debian (its networks; its violations and
# log models with its log file captured), of nginx from Debian (violations, log models of
# its access and error logs), on check_mktrace's traces and a
# real deadlock (tests/check/deadlock_subject.c), and queries joining two analyses
# (tests/derived/derived_test.py).
if(TARGET vigil_derived)
  foreach(t three_tier redis redis_analyses nginx_analyses violations join_violation_thread
            errors deadlock model display cache)
    add_test(NAME derived.${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/derived/derived_test.py ${t}
                     --mktrace $<TARGET_FILE:check_mktrace>)
    set_tests_properties(derived.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         TIMEOUT 180 LABELS derived)
  endforeach()
  set_tests_properties(derived.redis derived.redis_analyses derived.nginx_analyses
                       PROPERTIES SKIP_RETURN_CODE 77)
  # no recording through the preload: also under the sanitizers
  set_tests_properties(derived.violations derived.join_violation_thread derived.errors
                       derived.deadlock PROPERTIES LABELS "sanitize;derived")
  # vigil diff over two query results (docs/query.md "Comparing two runs"): three_tier at
  # two loads and Debian's redis-server at two workloads, against the differences
  # computed from the answers; bad input.
  foreach(t diff redis errors)
    add_test(NAME derived.results_${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/derived/results_diff_test.py ${t})
    set_tests_properties(derived.results_${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         TIMEOUT 180 LABELS "derived;query")
  endforeach()
  set_tests_properties(derived.results_redis PROPERTIES SKIP_RETURN_CODE 77)
  # docs/cookbook.md: its ten queries still give the answers printed there.
  add_test(NAME derived.cookbook
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/derived/cookbook_test.py check
                   --mktrace $<TARGET_FILE:check_mktrace>)
  set_tests_properties(derived.cookbook PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                       TIMEOUT 180 LABELS derived)
endif()
