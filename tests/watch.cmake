# vigil watch: the α plans keep every answer (replayed against full recordings of the
# mailbox example), and live runs of the mailbox example under the optimized and the
# unoptimized plan answer as a full recording does. Recordings use the preload shim: not
# under the sanitizers.
if(NOT VIGIL_SANITIZE)
  find_program(WATCH_PYTHON3 python3 HINTS /usr/bin)
  add_test(NAME watch.replay
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/replay_test.py
                   ${CMAKE_BINARY_DIR}/bin ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl)
  set_tests_properties(watch.replay PROPERTIES LABELS query TIMEOUT 600)
endif()
if(NOT VIGIL_SANITIZE)
  add_test(NAME watch.live
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/live_test.py
                   ${CMAKE_BINARY_DIR}/bin ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl)
  set_tests_properties(watch.live PROPERTIES LABELS query TIMEOUT 300)
endif()
if(NOT VIGIL_SANITIZE)
  add_test(NAME watch.attach
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/attach_test.py
                   ${CMAKE_BINARY_DIR}/bin ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl)
  set_tests_properties(watch.attach PROPERTIES LABELS query TIMEOUT 300)
endif()
if(NOT VIGIL_SANITIZE)
  add_test(NAME watch.incremental
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/incremental_test.py
                   ${CMAKE_BINARY_DIR}/bin ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl)
  set_tests_properties(watch.incremental PROPERTIES LABELS query TIMEOUT 600)
endif()
if(NOT VIGIL_SANITIZE)
  add_test(NAME watch.follow
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/follow_test.py
                   ${CMAKE_BINARY_DIR}/bin ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl)
  set_tests_properties(watch.follow PROPERTIES LABELS query TIMEOUT 600)
endif()
# The same over Debian's redis-server (a BGSAVE child: an image appearing mid-run).
if(NOT VIGIL_SANITIZE AND VIGIL_DEP_REDIS)
  add_test(NAME watch.follow-redis
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/follow_redis_test.py
                   ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(watch.follow-redis PROPERTIES LABELS query TIMEOUT 600)
endif()
