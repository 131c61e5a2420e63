# The relations layer (src/relations): unit tests on traces built byte by byte
# (tests/unit/reader_tracegen.c), and recordings of the mailbox example checked against
# the run's ground truth (tests/query/relations_truth.py, through relations_dump).
add_executable(relations_dump ${CMAKE_SOURCE_DIR}/tests/query/relations_dump.c)
target_link_libraries(relations_dump PRIVATE vigil_query PkgConfig::JANSSON)

if(CMOCKA_FOUND)
  add_executable(test_relations_unit ${CMAKE_SOURCE_DIR}/tests/query/relations_unit.c)
  target_include_directories(test_relations_unit PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(test_relations_unit PRIVATE vigil_query reader_tracegen
                        PkgConfig::CMOCKA)
  add_test(NAME query.relations.unit COMMAND test_relations_unit)
  set_tests_properties(query.relations.unit PROPERTIES LABELS "sanitize;query" TIMEOUT 120)
  # Per-class tables over a followed trace gaining a class past their ends.
  add_executable(test_relations_class_growth ${CMAKE_SOURCE_DIR}/tests/query/class_growth_unit.c)
  target_include_directories(test_relations_class_growth PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(test_relations_class_growth PRIVATE vigil_query reader_tracegen
                        PkgConfig::CMOCKA)
  add_test(NAME query.relations.class_growth COMMAND test_relations_class_growth)
  set_tests_properties(query.relations.class_growth PROPERTIES LABELS "sanitize;query"
                       TIMEOUT 120)
endif()

# Recordings by `vigil record` (the preload shim): not under the sanitizers.
find_program(RELATIONS_PYTHON3 python3 HINTS /usr/bin)
if(NOT VIGIL_SANITIZE)
  set(RELATIONS_RUNS
      "seed31\;--processors 2 --processes 6 --mailboxes 2 --messages 200 --seed 31"
      "seed32\;--processors 3 --processes 10 --mailboxes 4 --messages 600 --seed 32 --quantum 1"
      "seed33\;--processors 4 --processes 20 --mailboxes 3 --messages 2000 --seed 33")
  foreach(run ${RELATIONS_RUNS})
    list(GET run 0 name)
    list(GET run 1 options)
    separate_arguments(options)
    add_test(NAME query.relations.mailbox.${name}
             COMMAND ${CMAKE_SOURCE_DIR}/tests/query/relations_mailbox.sh ${CMAKE_BINARY_DIR}/bin
                     ${RELATIONS_PYTHON3} ${options})
    set_tests_properties(query.relations.mailbox.${name} PROPERTIES LABELS query TIMEOUT 120)
  endforeach()
endif()

# The temporal predicates and constructors at their boundaries, on the evaluator and end to
# end (the engine, and `vigil query`) on a trace built byte by byte with answers worked
# out by hand.
if(CMOCKA_FOUND)
  add_executable(test_query_temporal ${CMAKE_SOURCE_DIR}/tests/query/temporal_unit.c)
  target_include_directories(test_query_temporal PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(test_query_temporal PRIVATE vigil_query reader_tracegen
                        PkgConfig::CMOCKA)
  target_compile_definitions(test_query_temporal PRIVATE VIGIL_BIN="$<TARGET_FILE:vigil>")
  add_dependencies(test_query_temporal vigil)
  add_test(NAME query.temporal COMMAND test_query_temporal)
  set_tests_properties(query.temporal PROPERTIES LABELS "sanitize;query" TIMEOUT 60)
endif()
# The rest of TQuel (retrieve unique, V.all, ...): the same trace, answers worked out by
# hand (tests/query/tquel_rest_unit.c).
if(CMOCKA_FOUND)
  add_executable(test_query_tquel_rest ${CMAKE_SOURCE_DIR}/tests/query/tquel_rest_unit.c)
  target_include_directories(test_query_tquel_rest PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(test_query_tquel_rest PRIVATE vigil_query reader_tracegen
                        PkgConfig::CMOCKA)
  target_compile_definitions(test_query_tquel_rest PRIVATE VIGIL_BIN="$<TARGET_FILE:vigil>")
  add_dependencies(test_query_tquel_rest vigil)
  add_test(NAME query.tquel.rest COMMAND test_query_tquel_rest)
  set_tests_properties(query.tquel.rest PROPERTIES LABELS "sanitize;query" TIMEOUT 60)
endif()
# The update network of vigil watch (src/live/delta*.c) against the engine over a whole
# trace built byte by byte, in updates of 1, 7 and all events (tests/query/delta_unit.c).
if(CMOCKA_FOUND)
  add_executable(test_query_delta ${CMAKE_SOURCE_DIR}/tests/query/delta_unit.c)
  target_include_directories(test_query_delta PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(test_query_delta PRIVATE vigil_live reader_tracegen PkgConfig::CMOCKA)
  add_test(NAME query.delta COMMAND test_query_delta)
  set_tests_properties(query.delta PROPERTIES LABELS "sanitize;query" TIMEOUT 120)
endif()
