# The relations of a program before it runs (vgq_database_from_model,
# src/relations/model.c) checked against recordings, and the build options (a `keep` filter,
# interval ends without their begin) on a recording of the mailbox example.
add_executable(query_model_check ${CMAKE_SOURCE_DIR}/tests/query/query_model_check.c)
target_link_libraries(query_model_check PRIVATE vigil_query)

# Sensor descriptions without a subject: databases made without crashing, every relation
# bindable.
file(GLOB QUERY_MODEL_GOOD ${CMAKE_SOURCE_DIR}/tests/lang/good/*.vgl)
foreach(vgl ${QUERY_MODEL_GOOD})
  get_filename_component(name ${vgl} NAME_WE)
  add_test(NAME query.model.good.${name} COMMAND query_model_check ${vgl})
  set_tests_properties(query.model.good.${name} PROPERTIES LABELS "sanitize;query" TIMEOUT 60)
endforeach()

if(CMOCKA_FOUND)
  add_executable(test_relations_opts ${CMAKE_SOURCE_DIR}/tests/query/relations_opts_test.c)
  target_link_libraries(test_relations_opts PRIVATE vigil_query PkgConfig::CMOCKA)
  # without a trace: the begin_unknown column through the store's growth and resize
  add_test(NAME query.relations.opts.store COMMAND test_relations_opts)
  set_tests_properties(query.relations.opts.store PROPERTIES LABELS "sanitize;query"
                       TIMEOUT 60)
endif()

# On recordings by `vigil record` (the preload shim): not under the sanitizers.
if(NOT VIGIL_SANITIZE)
  set(QUERY_MODEL_RUN ${CMAKE_SOURCE_DIR}/tests/query/query_model.sh ${CMAKE_BINARY_DIR}/bin)
  # the mailbox example: the same relations exactly
  add_test(NAME query.model.mailbox
           COMMAND ${QUERY_MODEL_RUN} $<TARGET_FILE:query_model_check>
                   ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl @TRACE
                   -- $<TARGET_FILE:mailbox> --seed 3)
  # every field type of the C generator (tests/lang_c/all.vgl); entities of some declared
  # kinds are never created in that run
  add_test(NAME query.model.lang_c
           COMMAND ${QUERY_MODEL_RUN} $<TARGET_FILE:query_model_check>
                   ${CMAKE_SOURCE_DIR}/tests/lang_c/all.vgl @TRACE --subset
                   -- $<TARGET_FILE:lang_c_sensors>)
  set(QUERY_MODEL_TESTS query.model.mailbox query.model.lang_c)
  if(CMOCKA_FOUND)
    add_test(NAME query.relations.opts
             COMMAND ${QUERY_MODEL_RUN} $<TARGET_FILE:test_relations_opts> @TRACE
                     -- $<TARGET_FILE:mailbox> --processes 6 --mailboxes 2 --messages 200
                     --seed 3)
    list(APPEND QUERY_MODEL_TESTS query.relations.opts)
  endif()
  set_tests_properties(${QUERY_MODEL_TESTS} PROPERTIES LABELS query TIMEOUT 60)
endif()
