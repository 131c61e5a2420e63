# vigil export (docs/export.md): the chrome JSON validated against the Trace Event Format's
# fields and counted against `vigil dump`, the perfetto protobuf decoded back by protobuf-c
# (pftrace_decode) and compared, flows against `vigil net split`, damaged and bad input.
# Traces recorded without the preload (mailbox, three_tier_linked, bad) also run under the
# sanitizers.
if(TARGET pftrace_decode)
  foreach(c mailbox three_tier three_tier_linked bad formats otlp)
    add_test(NAME export.${c}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/export/export_test.py
                     ${CMAKE_BINARY_DIR}/bin ${c})
    set_tests_properties(export.${c} PROPERTIES TIMEOUT 300 LABELS export)
  endforeach()
  set_tests_properties(export.mailbox export.three_tier_linked export.bad export.formats
                       export.otlp
                       PROPERTIES LABELS "sanitize;export")
endif()

# vigild --metrics, scraped and parsed by Debian's python3-prometheus-client.
if(VIGIL_DEP_PROMCLIENT)
  add_test(NAME export.metrics
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/export/metrics_test.py
                   ${CMAKE_BINARY_DIR}/bin)
  set_tests_properties(export.metrics PROPERTIES TIMEOUT 300 LABELS "sanitize;export")
endif()

# The OTLP export decoded with OpenTelemetry's protobuf definitions as compiled by
# protobufjs (npm, pinned in ui/package-lock.json: built with the page into ui-npm).
find_program(VIGIL_DEP_NODE node) # as ui.cmake, which reports it missing
if(TARGET pftrace_decode AND TARGET vigil_ui_page AND VIGIL_DEP_NODE)
  add_test(NAME export.otlp_proto
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/export/export_test.py
                   ${CMAKE_BINARY_DIR}/bin otlp_proto)
  set_tests_properties(export.otlp_proto PROPERTIES TIMEOUT 300 LABELS export ENVIRONMENT
    "VIGIL_NODE=${VIGIL_DEP_NODE};NODE_PATH=${CMAKE_BINARY_DIR}/ui-npm/node_modules")
endif()
