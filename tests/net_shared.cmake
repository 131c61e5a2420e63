# Pipes shared by several processes and terminals (docs/net.md "Shared pipes and sockets",
# "Terminals"): a recursive `make -j` (its jobserver) and a multiprocessing.Pool recorded
# under strace, every pair checked against the bytes written; bash on a pty fed two lines.
# Through vigil record's preload: not under the sanitizers; the unit test is.
if(CMOCKA_FOUND AND TARGET vigil_net)
  add_executable(test_net_shared_unit ${CMAKE_SOURCE_DIR}/tests/net/analysis/shared_unit.c)
  target_link_libraries(test_net_shared_unit PRIVATE vigil_net PkgConfig::CMOCKA)
  add_test(NAME net_shared.unit COMMAND test_net_shared_unit)
  set_tests_properties(net_shared.unit PROPERTIES LABELS "sanitize;net" TIMEOUT 60)
endif()
if(TARGET vigil_net)
  foreach(t jobserver pool tty)
    add_test(NAME net_shared.${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/net/analysis/shared_test.py ${t})
    set_tests_properties(net_shared.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         TIMEOUT 300 LABELS net SKIP_RETURN_CODE 77)
  endforeach()
endif()
