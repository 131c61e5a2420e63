# What the tests need beyond the build itself. scripts/install-deps.sh (`make deps`)
# installs all of it. Without one of them some tests are not registered or cannot check
# everything, so a missing one is never silent:
#   - CI=true in the environment (or -DVIGIL_REQUIRE_TEST_DEPS=ON): configuration fails,
#     naming the missing package;
#   - elsewhere: a warning, and one CTest test `deps.NAME` per missing dependency that
#     reports itself skipped (exit 77, SKIP_RETURN_CODE) and names what it stands for,
#     so CTest's summary counts it. The same test fails if it is run with CI=true.
option(VIGIL_REQUIRE_TEST_DEPS "A missing test dependency fails the configuration" OFF)
set(VIGIL_DEPS_REQUIRED ${VIGIL_REQUIRE_TEST_DEPS})
if("$ENV{CI}" STREQUAL "true")
  set(VIGIL_DEPS_REQUIRED ON)
endif()

set(VIGIL_DEPS_MISSING "")
# vigil_test_dep(NAME FOUND PACKAGE WHAT): FOUND is the result of the check.
function(vigil_test_dep name found package what)
  if(found)
    return()
  endif()
  set(msg "test dependency ${name} missing (Debian: ${package}; make deps installs it): ${what}")
  if(VIGIL_DEPS_REQUIRED)
    message(SEND_ERROR "${msg} [CI=true: a missing test dependency is an error]")
  else()
    message(WARNING "${msg}: reported as the skipped test deps.${name}")
  endif()
  add_test(NAME deps.${name} COMMAND /bin/sh ${CMAKE_CURRENT_LIST_DIR}/missing.sh "${msg}")
  set_tests_properties(deps.${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS "deps;sanitize")
  set(VIGIL_DEPS_MISSING ${VIGIL_DEPS_MISSING} ${name} PARENT_SCOPE)
endfunction()

vigil_test_dep(cmocka "${CMOCKA_FOUND}" libcmocka-dev
               "the cmocka unit tests (reader_*, runtime.*, lang, query and net units) are not built")

find_program(VIGIL_DEP_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
vigil_test_dep(python3 "${VIGIL_DEP_PYTHON3}" python3 "every end-to-end test in Python")

set(VIGIL_DEP_BT2 FALSE)
if(VIGIL_DEP_PYTHON3)
  execute_process(COMMAND ${VIGIL_DEP_PYTHON3} -c "import bt2" RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(VIGIL_DEP_BT2 TRUE)
  endif()
endif()
vigil_test_dep(python3-bt2 "${VIGIL_DEP_BT2}" python3-bt2
               "reader_e2e_babeltrace and collector.records' babeltrace2 check")

find_program(VIGIL_DEP_BABELTRACE2 babeltrace2)
vigil_test_dep(babeltrace2 "${VIGIL_DEP_BABELTRACE2}" babeltrace2
               "mailbox.trace.babeltrace, runtime.shared_layout and reader_e2e_recover's babeltrace2 checks")

find_program(VIGIL_DEP_CLANG clang)
vigil_test_dep(clang "${VIGIL_DEP_CLANG}" clang "lang_c.clang and the fuzz build")

# PostgreSQL: the server's binaries and its server headers (the logging adapter).
set(VIGIL_DEP_PG FALSE)
file(GLOB pg_configs /usr/lib/postgresql/*/bin/pg_config)
foreach(pgc ${pg_configs})
  get_filename_component(bindir ${pgc} DIRECTORY)
  execute_process(COMMAND ${pgc} --includedir-server OUTPUT_VARIABLE incdir
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND EXISTS ${incdir}/postgres.h AND EXISTS ${bindir}/initdb
     AND EXISTS ${bindir}/pgbench)
    set(VIGIL_DEP_PG TRUE)
  endif()
endforeach()
vigil_test_dep(postgresql "${VIGIL_DEP_PG}" "postgresql postgresql-server-dev-all"
               "store.postgres, collector.store and logmodel.postgres")
set(VIGIL_DEP_LIBPQ FALSE)
if(TARGET vigil_store)
  set(VIGIL_DEP_LIBPQ TRUE)
endif()
vigil_test_dep(libpq "${VIGIL_DEP_LIBPQ}" libpq-dev "vigil store and its tests are not built")

set(VIGIL_DEP_REDIS TRUE)
foreach(p redis-server redis-benchmark redis-cli)
  string(MAKE_C_IDENTIFIER "VIGIL_DEP_${p}" var)
  find_program(${var} ${p})
  if(NOT ${var})
    set(VIGIL_DEP_REDIS FALSE)
  endif()
endforeach()
vigil_test_dep(redis "${VIGIL_DEP_REDIS}" "redis-server redis-tools"
               "net_record.redis, net_analysis.redis, consistency.listeners-redis, derived.*redis, watch.follow-redis")

find_program(VIGIL_DEP_INETD inetd PATHS /usr/sbin NO_DEFAULT_PATH)
vigil_test_dep(openbsd-inetd "${VIGIL_DEP_INETD}" openbsd-inetd "net_fork.inetd_*")

find_program(VIGIL_DEP_IP ip)
vigil_test_dep(iproute2 "${VIGIL_DEP_IP}" iproute2 "net_analysis.netns")

find_program(VIGIL_DEP_JAVAC javac)
find_program(VIGIL_DEP_JAVA java)
set(VIGIL_DEP_JDK FALSE)
if(VIGIL_DEP_JAVAC AND VIGIL_DEP_JAVA)
  set(VIGIL_DEP_JDK TRUE)
endif()
vigil_test_dep(jdk "${VIGIL_DEP_JDK}" openjdk-17-jdk-headless "lang_xlang_* (the Java driver)")

find_program(VIGIL_DEP_STRACE strace)
vigil_test_dep(strace "${VIGIL_DEP_STRACE}" strace
               "net_shared.jobserver and net_shared.pool (the bytes each call moved)")

find_program(VIGIL_DEP_HELP2MAN help2man)
vigil_test_dep(help2man "${VIGIL_DEP_HELP2MAN}" help2man
               "the man pages (make install) and install.destdir, install.deb")

set(VIGIL_DEP_PANDAS FALSE)
if(VIGIL_DEP_PYTHON3)
  execute_process(COMMAND ${VIGIL_DEP_PYTHON3} -c "import pandas" RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(VIGIL_DEP_PANDAS TRUE)
  endif()
endif()
vigil_test_dep(python3-pandas "${VIGIL_DEP_PANDAS}" python3-pandas
               "python.module's DataFrame checks")

if(VIGIL_DEPS_MISSING)
  list(LENGTH VIGIL_DEPS_MISSING n)
  message(STATUS "tests: ${n} missing test dependencies: ${VIGIL_DEPS_MISSING}")
endif()

# vigil export --format perfetto is built with protobuf-c; without it, export.* are not registered.
set(VIGIL_DEP_PROTOBUFC FALSE)
if(TARGET vigil_perfetto_pb)
  set(VIGIL_DEP_PROTOBUFC TRUE)
endif()
vigil_test_dep(protobuf-c "${VIGIL_DEP_PROTOBUFC}" "libprotobuf-c-dev protobuf-c-compiler"
               "vigil export --format perfetto and the export.* tests")

set(VIGIL_DEP_PROMCLIENT FALSE)
if(VIGIL_DEP_PYTHON3)
  execute_process(COMMAND ${VIGIL_DEP_PYTHON3} -c "import prometheus_client.parser"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(VIGIL_DEP_PROMCLIENT TRUE)
  endif()
endif()
vigil_test_dep(python3-prometheus-client "${VIGIL_DEP_PROMCLIENT}" python3-prometheus-client
               "export.metrics (vigild --metrics parsed by the Prometheus client's parser)")

find_file(VIGIL_DEP_SDT_H sys/sdt.h PATHS /usr/include /usr/include/x86_64-linux-gnu)
vigil_test_dep(systemtap-sdt-dev "${VIGIL_DEP_SDT_H}" systemtap-sdt-dev
               "usdt.* (the SDT subject of tests/usdt)")
