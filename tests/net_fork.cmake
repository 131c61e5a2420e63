# Forking servers from Debian recorded with their clients (issue 19; docs/net.md "Forking
# servers"): PostgreSQL on its Unix socket and over TCP under psql and pgbench -C, and
# openbsd-inetd over TCP and a Unix socket: one network per client connection, holding the
# server's accept, the forked child's life and every byte (tests/net/fork/fork_test.py).
# Through vigil record's preload: not under the sanitizers. A missing server is a skip
# (77), reported by deps.postgresql / deps.openbsd-inetd too.
if(TARGET vigil_net)
  foreach(t pg_unix pg_tcp inetd_tcp inetd_unix)
    add_test(NAME net_fork.${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/net/fork/fork_test.py ${t})
    set_tests_properties(net_fork.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         TIMEOUT 180 LABELS net SKIP_RETURN_CODE 77)
  endforeach()
endif()
