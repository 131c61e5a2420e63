# Tests of the mailbox example (examples/mailbox). The program run directly is meaningful
# under the sanitizers (label "sanitize"); runs under `vigil record` (preload) are not.
find_program(MAILBOX_PYTHON3 python3 HINTS /usr/bin) # /usr/bin's has python3-bt2
find_program(MAILBOX_BABELTRACE2 babeltrace2)
set(MAILBOX_E2E ${CMAKE_CURRENT_LIST_DIR}/e2e)
set(MAILBOX_BIN ${CMAKE_BINARY_DIR}/bin)

add_test(NAME mailbox.options
         COMMAND ${MAILBOX_E2E}/mailbox_bad_options.sh $<TARGET_FILE:mailbox>)
add_test(NAME mailbox.determinism
         COMMAND ${MAILBOX_E2E}/mailbox_determinism.sh $<TARGET_FILE:mailbox>)
set_tests_properties(mailbox.options mailbox.determinism
                     PROPERTIES LABELS sanitize TIMEOUT 120)

# Runs to completion, with a correct ground truth, on several processor counts; the last
# one is large and has more processors than processes.
set(MAILBOX_RUNS
    "1\;--processors 1 --processes 6 --messages 300 --seed 11"
    "2\;--processors 2 --processes 8 --mailboxes 2 --messages 500 --seed 12 --quantum 1"
    "3\;--processors 3 --processes 10 --mailboxes 5 --messages 800 --seed 13"
    "8\;--processors 8 --processes 5 --mailboxes 1 --messages 300 --seed 14"
    "large\;--processors 4 --processes 40 --mailboxes 6 --messages 5000 --seed 15")
foreach(run ${MAILBOX_RUNS})
  list(GET run 0 name)
  list(GET run 1 options)
  separate_arguments(options)
  add_test(NAME mailbox.run.${name}
           COMMAND ${MAILBOX_E2E}/mailbox_run.sh $<TARGET_FILE:mailbox> ${MAILBOX_PYTHON3}
                   ${options})
  set_tests_properties(mailbox.run.${name} PROPERTIES LABELS sanitize TIMEOUT 120)
endforeach()

# A recording holds exactly the facts of the ground truth, in the same order per entity:
# read back by babeltrace2 (a direct recording through VIGIL_OUT) and by `vigil dump`
# (a recording by `vigil record`).
if(MAILBOX_BABELTRACE2)
  add_test(NAME mailbox.trace.babeltrace
           COMMAND ${MAILBOX_E2E}/mailbox_trace.sh direct ${MAILBOX_BIN} ${MAILBOX_PYTHON3}
                   --processors 3 --processes 12 --mailboxes 4 --messages 2000 --seed 21)
  set_tests_properties(mailbox.trace.babeltrace PROPERTIES LABELS sanitize TIMEOUT 120)
endif()
if(NOT VIGIL_SANITIZE)
  add_test(NAME mailbox.trace.record
           COMMAND ${MAILBOX_E2E}/mailbox_trace.sh record ${MAILBOX_BIN} ${MAILBOX_PYTHON3}
                   --processors 2 --processes 8 --mailboxes 3 --messages 1000 --seed 22)
  set_tests_properties(mailbox.trace.record PROPERTIES TIMEOUT 120)
endif()
