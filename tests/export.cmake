# vigil export (docs/export.md): the chrome JSON validated against the Trace Event Format's
# fields and counted against `vigil dump`, the perfetto protobuf decoded back by protobuf-c
# (pftrace_decode) and compared, flows against `vigil net split`, sampled sensors' counter
# tracks against `vigil dump`, damaged and bad input.
# Traces recorded without the preload (mailbox, three_tier_linked, bad) also run under the
# sanitizers.
if(TARGET pftrace_decode)
  # export.sampled's subject: sampled sensors with numeric fields (counter tracks)
  set(export_gen ${CMAKE_CURRENT_BINARY_DIR}/export_gen)
  add_custom_command(
    OUTPUT ${export_gen}/smp_sensors.h ${export_gen}/smp_sensors.c
    COMMAND $<TARGET_FILE:vigil> gen ${CMAKE_SOURCE_DIR}/tests/export/sampled.vgl --lang c
            -o ${export_gen}
    DEPENDS vigil ${CMAKE_SOURCE_DIR}/tests/export/sampled.vgl
    COMMENT "vigil gen tests/export/sampled.vgl --lang c")
  add_executable(export_sampled ${CMAKE_SOURCE_DIR}/tests/export/sampled.c
                                ${export_gen}/smp_sensors.c)
  target_include_directories(export_sampled PRIVATE ${CMAKE_SOURCE_DIR}/include ${export_gen})
  target_link_libraries(export_sampled PRIVATE vigil_runtime)
  set_target_properties(export_sampled PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  foreach(c mailbox three_tier three_tier_linked bad formats otlp sampled)
    add_test(NAME export.${c}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/export/export_test.py
                     ${CMAKE_BINARY_DIR}/bin ${c})
    set_tests_properties(export.${c} PROPERTIES TIMEOUT 300 LABELS export)
  endforeach()
  set_tests_properties(export.mailbox export.three_tier_linked export.bad export.formats
                       export.otlp export.sampled
                       PROPERTIES LABELS "sanitize;export")
endif()

# vigild --metrics, scraped and parsed by Debian's python3-prometheus-client.
if(VIGIL_DEP_PROMCLIENT)
  add_test(NAME export.metrics
           COMMAND ${VIGIL_SPOOL_GUARD} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/export/metrics_test.py
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
