# Validation of behaviour models (issue 5; tests/logmodel/README.md): synthetic subjects
# with known injected changes, recorded under `vigil record` at several magnitudes, whose
# `vigil diff` must rank the change in the top 3 of the right report; and PostgreSQL from
# Debian's packages under `vigil record`, driven by pgbench with and without frequent
# checkpoints, whose diff must rank checkpoint events first.
foreach(s lock cache)
  add_executable(logmodel_${s} ${CMAKE_SOURCE_DIR}/tests/logmodel/${s}_subject.c)
  target_compile_options(logmodel_${s} PRIVATE -O2 -g)
  target_link_libraries(logmodel_${s} PRIVATE vigil_runtime)
endforeach()
# Not linked with libvigil: its syslog calls are captured by the preload.
add_executable(logmodel_mix ${CMAKE_SOURCE_DIR}/tests/logmodel/mix_subject.c)
target_compile_options(logmodel_mix PRIVATE -O2 -g)

find_program(LOGMODEL_PYTHON3 python3 HINTS /usr/bin)
if(NOT VIGIL_SANITIZE)
  foreach(s lock cache mix)
    add_test(NAME logmodel.synthetic.${s}
             COMMAND ${LOGMODEL_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/logmodel/synthetic.py ${s}
                     --bin ${CMAKE_BINARY_DIR}/bin)
    set_tests_properties(logmodel.synthetic.${s} PROPERTIES LABELS model TIMEOUT 120)
  endforeach()
endif()

# PostgreSQL's logging adapter (tests/logmodel/pg_vigil_log.c), built against the server
# headers of the newest PostgreSQL under /usr/lib/postgresql (postgresql-server-dev-all);
# the test runs that version's binaries. Without them the test says so and is skipped.
file(GLOB LOGMODEL_PG_CONFIGS /usr/lib/postgresql/*/bin/pg_config)
set(LOGMODEL_PG_BINDIR "")
set(LOGMODEL_PG_VERSION 0)
foreach(pgc ${LOGMODEL_PG_CONFIGS})
  get_filename_component(bindir ${pgc} DIRECTORY)
  get_filename_component(verdir ${bindir} DIRECTORY)
  get_filename_component(ver ${verdir} NAME)
  execute_process(COMMAND ${pgc} --includedir-server OUTPUT_VARIABLE incdir
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND EXISTS ${incdir}/postgres.h AND EXISTS ${bindir}/postgres
     AND ver GREATER LOGMODEL_PG_VERSION)
    set(LOGMODEL_PG_VERSION ${ver})
    set(LOGMODEL_PG_BINDIR ${bindir})
    set(LOGMODEL_PG_INCLUDE ${incdir})
  endif()
endforeach()
if(LOGMODEL_PG_BINDIR)
  add_library(pg_vigil_log MODULE ${CMAKE_SOURCE_DIR}/tests/logmodel/pg_vigil_log.c)
  set_target_properties(pg_vigil_log PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
                                                          ${CMAKE_BINARY_DIR}/bin)
  target_include_directories(pg_vigil_log SYSTEM PRIVATE ${LOGMODEL_PG_INCLUDE})
  target_link_libraries(pg_vigil_log PRIVATE vigil_runtime)
  set(LOGMODEL_PG_ARGS --pg-bin ${LOGMODEL_PG_BINDIR} --adapter $<TARGET_FILE:pg_vigil_log>)
else()
  message(STATUS "logmodel.postgres: no PostgreSQL server headers "
                 "(postgresql-server-dev-all); the test will be skipped")
  set(LOGMODEL_PG_ARGS --pg-bin "")
endif()
# The system logger's stand-in: what would have reached syslog goes to a file.
add_library(logmodel_syslog_sink MODULE ${CMAKE_SOURCE_DIR}/tests/logmodel/syslog_sink.c)
set_target_properties(logmodel_syslog_sink PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
                                                               ${CMAKE_BINARY_DIR}/bin)
if(NOT VIGIL_SANITIZE)
  add_test(NAME logmodel.postgres
           COMMAND ${LOGMODEL_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/logmodel/postgres.py
                   --bin ${CMAKE_BINARY_DIR}/bin ${LOGMODEL_PG_ARGS}
                   --syslog-sink $<TARGET_FILE:logmodel_syslog_sink>)
  set_tests_properties(logmodel.postgres PROPERTIES LABELS "postgres;model" TIMEOUT 180
                                                    SKIP_RETURN_CODE 77)
endif()

# Stock PostgreSQL with zero lines of integration (issue 23; tests/logmodel/pg_stock.py):
# its messages captured at syslog (one call site) and at write(2) to stderr, each
# message's template an event; one variation of each scenario, in the top 3 of vigil diff.
file(GLOB LOGMODEL_PG_SERVERS /usr/lib/postgresql/*/bin/postgres)
set(LOGMODEL_PG_STOCK_BIN "")
foreach(srv ${LOGMODEL_PG_SERVERS})
  get_filename_component(bindir ${srv} DIRECTORY)
  set(LOGMODEL_PG_STOCK_BIN ${bindir}) # the last (glob order: the newest version)
endforeach()
if(NOT VIGIL_SANITIZE)
  foreach(case checkpoint.syslog autovacuum.syslog checkpoint.stderr)
    string(REPLACE "." ";" parts ${case})
    list(GET parts 0 scenario)
    list(GET parts 1 dest)
    add_test(NAME logmodel.pg_stock.${case}
             COMMAND ${LOGMODEL_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/logmodel/pg_stock.py
                     --bin ${CMAKE_BINARY_DIR}/bin --pg-bin "${LOGMODEL_PG_STOCK_BIN}"
                     --syslog-sink $<TARGET_FILE:logmodel_syslog_sink>
                     --scenario ${scenario} --dest ${dest})
    set_tests_properties(logmodel.pg_stock.${case} PROPERTIES LABELS "postgres;model"
                         TIMEOUT 600 SKIP_RETURN_CODE 77)
  endforeach()
endif()
