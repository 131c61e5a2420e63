# Names that follow what processes and threads call themselves, and user-defined states
# summed per network (docs/net.md "Process names", "User-defined states"):
#   names.subject    tests/names/names_subject.c renames itself (prctl, pthread_setname_np
#                    of itself and of another thread, its argv title) between markers:
#                    exact names and valid times in vg.*.name events, the Process and
#                    Thread relations (TQuel), babeltrace2
#   names.exec       after exec, the process is called what the new program is called
#   names.states     `vigil net report` sums the subject's .vgl states per network exactly
#                    against the state relation's tuples; names in the network and SVG
#   names.nginx      Debian's nginx recorded with curl: master and workers by their titles,
#                    each request's network served by "nginx: worker process"
#   names.*_linked   the same, the subject recording itself (VIGIL_OUT): under the sanitizers
#   names.postgres   Debian's PostgreSQL recorded: checkpointer, WAL writer and a backend
#                    told apart by their titles, with the name before and after each
set(NAMES_GEN ${CMAKE_CURRENT_BINARY_DIR}/names_gen)
add_custom_command(
  OUTPUT ${NAMES_GEN}/names_sensors.h ${NAMES_GEN}/names_sensors.c
  COMMAND $<TARGET_FILE:vigil> gen ${CMAKE_SOURCE_DIR}/tests/names/phases.vgl --lang c
          -o ${NAMES_GEN}
  DEPENDS vigil ${CMAKE_SOURCE_DIR}/tests/names/phases.vgl
  COMMENT "vigil gen tests/names/phases.vgl --lang c")
add_executable(names_subject ${CMAKE_SOURCE_DIR}/tests/names/names_subject.c
                             ${NAMES_GEN}/names_sensors.c)
target_include_directories(names_subject PRIVATE ${CMAKE_SOURCE_DIR}/include ${NAMES_GEN})
target_link_libraries(names_subject PRIVATE vigil_runtime Threads::Threads)

foreach(t subject exec states postgres nginx subject_linked states_linked)
  add_test(NAME names.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/names/names_test.py ${t})
  set_tests_properties(names.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 180)
endforeach()
# The subject records itself (linked with libvigil, VIGIL_OUT): meaningful under the sanitizers.
set_tests_properties(names.subject_linked names.states_linked PROPERTIES LABELS sanitize)
