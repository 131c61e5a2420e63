# Interaction networks, the analysis side (src/net, docs/net.md "Analysis"): matching,
# clock correction and propagation on synthetic event sets with exact expected networks
# (tests/net/analysis/net_unit.c); the commands on a synthetic 60-thread network and on
# bad input, and end to end on recordings (tests/net/analysis/net_test.py).
if(CMOCKA_FOUND AND TARGET vigil_net)
  add_executable(test_net_unit ${CMAKE_SOURCE_DIR}/tests/net/analysis/net_unit.c)
  target_link_libraries(test_net_unit PRIVATE vigil_net PkgConfig::CMOCKA)
  add_test(NAME net_analysis.unit COMMAND test_net_unit)
  set_tests_properties(net_analysis.unit PROPERTIES LABELS "sanitize;net" TIMEOUT 60)
endif()

# Through the commands. The recordings go through vigil record's preload: not under the
# sanitizers; the synthetic network is.
if(TARGET vigil_net)
  add_executable(net_hop ${CMAKE_SOURCE_DIR}/tests/net/analysis/hop.c)
  target_link_libraries(net_hop PRIVATE Threads::Threads)
  foreach(t three_tier_unmodified three_tier_instrumented servers_only skewed_hosts
            render_60 bad_input netns pipeline redis)
    add_test(NAME net_analysis.${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/net/analysis/net_test.py ${t})
    set_tests_properties(net_analysis.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         TIMEOUT 120 LABELS net)
  endforeach()
  set_tests_properties(net_analysis.render_60 PROPERTIES LABELS "sanitize;net")
  # Three hosts in network namespaces (root and iproute2 needed: skipped otherwise).
  set_tests_properties(net_analysis.netns net_analysis.redis PROPERTIES SKIP_RETURN_CODE 77)
endif()
