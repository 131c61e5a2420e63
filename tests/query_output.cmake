# Writers of query results (src/query/output*.c): table, CSV, JSON lines and SQLite, on
# hand-built relations; JSON read back with jansson, SQLite through sqlite3.
if(CMOCKA_FOUND)
  add_executable(test_query_output ${CMAKE_SOURCE_DIR}/tests/query/output_unit.c)
  target_include_directories(test_query_output PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(test_query_output PRIVATE vigil_query reader_tracegen PkgConfig::JANSSON
                        PkgConfig::SQLITE3 PkgConfig::CMOCKA m)
  add_test(NAME query.output.unit COMMAND test_query_output)
  set_tests_properties(query.output.unit PROPERTIES LABELS "sanitize;query" TIMEOUT 60)
endif()
