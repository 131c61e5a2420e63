# vigil ui (docs/ui.md): the server without a browser (ui.server: loopback, refusals, 4xx
# JSON errors, answers equal to vigil query's, Ctrl-C; also under the sanitizers, on a
# recording made through VIGIL_OUT), and the page in Debian's chromium driven by
# playwright-core (ui.page: rows per thread, workbench = vigil query, caret, export, no
# console errors; screenshots in BUILD/test-output/ui; ui.display: the Display tab's mailbox
# movie against vigil query and vigil display render, stepping, playing, a bad .vgd).
find_program(VIGIL_DEP_NODE node)
vigil_test_dep(nodejs "${VIGIL_DEP_NODE}" "nodejs npm" "ui.server and ui.page (vigil ui)")
set(VIGIL_DEP_CHROMIUM FALSE)
if(EXISTS /usr/bin/chromium)
  set(VIGIL_DEP_CHROMIUM TRUE)
endif()
vigil_test_dep(chromium "${VIGIL_DEP_CHROMIUM}" chromium "ui.page (vigil ui's page in a browser)")
if(VIGIL_DEP_NODE AND TARGET vigil_ui)
  add_test(NAME ui.server COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/server_test.cjs)
  set_tests_properties(ui.server PROPERTIES LABELS "ui;sanitize" TIMEOUT 300
                       ENVIRONMENT "${VIGIL_TEST_ENV}")
  # the analysis views' routes against vigil diff, cdf and net report (also sanitized)
  add_test(NAME ui.analysis_server COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/analysis_server_test.cjs)
  set_tests_properties(ui.analysis_server PROPERTIES LABELS "ui;sanitize" TIMEOUT 300
                       ENVIRONMENT "${VIGIL_TEST_ENV}")
  if(VIGIL_DEP_CHROMIUM AND TARGET vigil_ui_page AND NOT VIGIL_SANITIZE)
    add_test(NAME ui.page COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/page_test.cjs)
    set_tests_properties(ui.page PROPERTIES LABELS ui TIMEOUT 300 ENVIRONMENT
      "${VIGIL_TEST_ENV};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules;PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1;VIGIL_UI_SHOTS=${CMAKE_BINARY_DIR}/test-output/ui")
    # the Display tab: the mailbox movie against vigil query and vigil display render
    add_test(NAME ui.display COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/display_test.cjs)
    set_tests_properties(ui.display PROPERTIES LABELS ui TIMEOUT 300 ENVIRONMENT
      "${VIGIL_TEST_ENV};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules;PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1;VIGIL_UI_SHOTS=${CMAKE_BINARY_DIR}/test-output/ui")
    # the analysis views: the model workbench against vigil diff and vigil cdf (injected
    # changes first, linking), the network browser against vigil net split and its JSON
    # (nets_hosts: three hosts, one skewed: clock bounds, jumps at recorded times;
    # models_timeline: two mailbox traces, a transition's and an event's jump to each timeline)
    foreach(t models models_timeline nets nets_hosts)
      add_test(NAME ui.${t} COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/${t}_test.cjs)
      set_tests_properties(ui.${t} PROPERTIES LABELS ui TIMEOUT 400 ENVIRONMENT
        "${VIGIL_TEST_ENV};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules;PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1;VIGIL_UI_SHOTS=${CMAKE_BINARY_DIR}/test-output/ui")
    endforeach()
    # derived relations in the page: WaitFor's rows and its pointers in the Display tab
    # (a recording of watch_locks, tests/watch.cmake), Message through the workbench
    # (three_tier), against vigil relations, vigil query and vigil display render
    add_test(NAME ui.derived COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/derived_test.cjs
                                     $<TARGET_FILE:watch_locks>)
    set_tests_properties(ui.derived PROPERTIES LABELS "ui;derived" TIMEOUT 400 ENVIRONMENT
      "${VIGIL_TEST_ENV};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules;PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1;VIGIL_UI_SHOTS=${CMAKE_BINARY_DIR}/test-output/ui")
  endif()
endif()
if(VIGIL_DEP_NODE AND VIGIL_DEP_CHROMIUM AND TARGET vigil_ui_page AND NOT VIGIL_SANITIZE)
  # live: vigil watch's preload runs the subject, so not under the sanitizers
  add_test(NAME ui.live COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/live_test.cjs)
  set_tests_properties(ui.live PROPERTIES LABELS ui TIMEOUT 300 ENVIRONMENT
    "${VIGIL_TEST_ENV};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules;PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1;VIGIL_UI_SHOTS=${CMAKE_BINARY_DIR}/test-output/ui")
  # live with a display: vigil watch --display's sensors, icons while the subject runs,
  # the scene after it equal to vigil display render's
  add_test(NAME ui.live_display COMMAND ${VIGIL_DEP_NODE} ${CMAKE_SOURCE_DIR}/tests/ui/live_display_test.cjs)
  set_tests_properties(ui.live_display PROPERTIES LABELS ui TIMEOUT 300 ENVIRONMENT
    "${VIGIL_TEST_ENV};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules;PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1;VIGIL_UI_SHOTS=${CMAKE_BINARY_DIR}/test-output/ui")
endif()
