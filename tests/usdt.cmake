# USDT probe sites as sensors (docs/usdt.md; tests/usdt/usdt_test.py): vigil usdt list on
# our SDT subject (built by the test with gcc and clang, -O0 and -O2), Debian's PostgreSQL
# and libc; vigil record --usdt checked value by value; stripped and already patched
# sites; run-time switching through vigil probes.
find_program(USDT_PYTHON3 python3 HINTS /usr/bin)
if(VIGIL_DEP_SDT_H)
foreach(t list record bad)
  add_test(NAME usdt.${t} COMMAND ${USDT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/usdt/usdt_test.py ${t})
  set_tests_properties(usdt.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300
                       LABELS "usdt;sanitize")
endforeach()
endif()
