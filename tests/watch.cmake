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
# WaitFor followed live (the wait-for graph fed event by event into the update network):
# a subject whose threads wait for real mutexes, its sensors generated from locks.vgl;
# the live answers, printed while the subject still runs, equal vigil query's over the
# kept trace; the analyses that cannot run live are refused in one line each.
set(WATCH_GEN ${CMAKE_CURRENT_BINARY_DIR}/watch_gen)
add_custom_command(
  OUTPUT ${WATCH_GEN}/lk_sensors.h ${WATCH_GEN}/lk_sensors.c
  COMMAND $<TARGET_FILE:vigil> gen ${CMAKE_CURRENT_LIST_DIR}/watch/locks.vgl --lang c
          -o ${WATCH_GEN}
  DEPENDS vigil ${CMAKE_CURRENT_LIST_DIR}/watch/locks.vgl
  COMMENT "vigil gen tests/watch/locks.vgl --lang c")
add_executable(watch_locks ${CMAKE_CURRENT_LIST_DIR}/watch/locks.c ${WATCH_GEN}/lk_sensors.c)
target_include_directories(watch_locks PRIVATE ${CMAKE_SOURCE_DIR}/include ${WATCH_GEN})
target_link_libraries(watch_locks PRIVATE vigil_runtime Threads::Threads)
if(NOT VIGIL_SANITIZE)
  add_test(NAME watch.live-waits
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/waits_test.py
                   ${CMAKE_BINARY_DIR}/bin $<TARGET_FILE:watch_locks>
                   ${CMAKE_CURRENT_LIST_DIR}/watch/locks.vgl
                   ${CMAKE_SOURCE_DIR}/examples/mailbox/mailbox.vgl)
  set_tests_properties(watch.live-waits PROPERTIES LABELS query TIMEOUT 300)
endif()
# The networks followed live (derived/net_live.c): the three-tier example and Debian's
# redis-server with redis-benchmark run by vigil watch; Message, NetRunning, NetWaiting
# printed live, some while the subject still runs, and Network at the end, equal vigil
# query's over the kept trace, which equals vigil net split's networks; each tuple taken
# once (--stats deltas); the networks from --pid and Network re-evaluated refused.
if(NOT VIGIL_SANITIZE)
  add_test(NAME watch.live-messages
           COMMAND ${WATCH_PYTHON3} ${CMAKE_CURRENT_LIST_DIR}/watch/messages_test.py
                   ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(watch.live-messages PROPERTIES LABELS query TIMEOUT 400)
endif()
