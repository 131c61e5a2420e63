# The TQuel engine through `vigil query` and `vigil explain` on a recording of the mailbox
# example: plans, aggregates, results ranged over, --into SQLite, bad input, damage
# (tests/query/engine_cli.py). Recordings use the preload shim: not under the sanitizers.
if(NOT VIGIL_SANITIZE)
  find_program(ENGINE_PYTHON3 python3 HINTS /usr/bin)
  add_test(NAME query.engine.cli
           COMMAND ${ENGINE_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/query/engine_cli.py
                   ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(query.engine.cli PROPERTIES LABELS query TIMEOUT 300)
endif()
