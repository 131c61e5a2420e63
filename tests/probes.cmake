# vigil probes (docs/control.md "Probes"): a subject registering sensors over time
# (tests/probes/probes_subject.c) listens for monitors; tests/probes/probes_test.py
# switches its sensors with `vigil probes --pid` and reads the trace with `vigil dump`.
# The subject gets VIGIL_CONTROL=listen in its environment (sanitizer builds too); the
# `.record` variants run it under `vigil record --listen` (the preload: not under the
# sanitizers).
add_executable(vg_probes_subject ${CMAKE_SOURCE_DIR}/tests/probes/probes_subject.c)
target_link_libraries(vg_probes_subject PRIVATE vigil_runtime Threads::Threads)

foreach(t switch paging bad exact impostor entity)
  add_test(NAME probes.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/probes/probes_test.py ${t}
                   $<TARGET_FILE:vg_probes_subject>)
  set_tests_properties(probes.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 60
                       LABELS sanitize)
endforeach()
if(NOT VIGIL_SANITIZE)
  foreach(t switch exact entity)
    add_test(NAME probes.record.${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/probes/probes_test.py ${t}
                     $<TARGET_FILE:vg_probes_subject> record)
    set_tests_properties(probes.record.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         TIMEOUT 60)
  endforeach()
endif()
# The README's probes example on the mailbox example under vigil record --listen: the
# sensors placed on entities record once switched on (issue 21, item 5).
if(NOT VIGIL_SANITIZE)
  add_test(NAME probes.mailbox
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/probes/probes_mailbox.py
                   $<TARGET_FILE:vigil> $<TARGET_FILE:mailbox>)
  set_tests_properties(probes.mailbox PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)
endif()
# VIGIL_PROBES_FILE: the subject re-reads a pattern file (tests/probes/probes_file_test.py).
add_test(NAME probes.file
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/probes/probes_file_test.py
                 $<TARGET_FILE:vg_probes_subject>)
set_tests_properties(probes.file PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300
                     LABELS sanitize)
# vigild --probes-file: the collector re-reads the pattern file for its subjects (the same
# test, the subject sending to vigild).
add_test(NAME probes.file_vigild
         COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3
                 ${CMAKE_SOURCE_DIR}/tests/probes/probes_file_test.py
                 $<TARGET_FILE:vg_probes_subject> --vigild)
set_tests_properties(probes.file_vigild PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300
                     LABELS "sanitize;collector")
