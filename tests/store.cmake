# The PostgreSQL store (src/store, vigil store): a real server from Debian's packages,
# started by the test on a free loopback port (tests/store/store_test.py).
if(TARGET vigil_store AND NOT VIGIL_SANITIZE)
  add_executable(store_image ${CMAKE_SOURCE_DIR}/tests/store/store_image.c)
  target_link_libraries(store_image PRIVATE vigil_store)
  file(GLOB STORE_PG_BIN /usr/lib/postgresql/*/bin/initdb)
  if(STORE_PG_BIN)
    list(GET STORE_PG_BIN -1 STORE_PG_BIN)
    get_filename_component(STORE_PG_BIN ${STORE_PG_BIN} DIRECTORY)
    add_test(NAME store.postgres
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/store/store_test.py
                     ${CMAKE_BINARY_DIR}/bin ${STORE_PG_BIN})
    set_tests_properties(store.postgres PROPERTIES LABELS store TIMEOUT 300)
    # TQuel compiled to SQL over the store (docs/tquel-sql.md): each construct answered
    # over the trace and over the store, refusals and bad input, --index where btree_gist
    # cannot be created (query_store_test.py).
    add_test(NAME store.query
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/store/query_store_test.py
                     ${CMAKE_BINARY_DIR}/bin ${STORE_PG_BIN})
    set_tests_properties(store.query PROPERTIES LABELS "store;query" TIMEOUT 300)
    # vigil store --derived (docs/store.md "Derived relations"): queries naming derived
    # relations, alone and joined with primitive ones, answered over the trace and over
    # the store alike (derived_store_test.py).
    if(TARGET vigil_derived)
      add_test(NAME store.derived
               COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/store/derived_store_test.py
                       ${CMAKE_BINARY_DIR}/bin ${STORE_PG_BIN})
      set_tests_properties(store.derived PROPERTIES LABELS "store;derived" TIMEOUT 180)
    endif()
  endif()
endif()
