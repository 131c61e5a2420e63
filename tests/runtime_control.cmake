# The control channel (docs/control.md): a fake monitor in Python drives a subject linked
# with libvigil through VIGIL_CONTROL and reads the trace with `vigil dump`
# (tests/runtime/control_test.py); the monitor's C side (src/cli/control_link.c) is run by
# the latency measurement (bench/control_latency.c) on a few hundred commands.
add_executable(vg_control_subject ${CMAKE_SOURCE_DIR}/tests/runtime/control_subject.c)
target_link_libraries(vg_control_subject PRIVATE vigil_runtime)

foreach(t none sensor entities trigger entity gone garbage nogo nomonitor fork listen monitors report
          report_listeners)
  add_test(NAME runtime_control.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/runtime/control_test.py ${t}
                   $<TARGET_FILE:vg_control_subject>)
  # The subject is linked with the (instrumented, in the sanitizer build) libvigil.
  set_tests_properties(runtime_control.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                       TIMEOUT 60 LABELS sanitize)
endforeach()

add_executable(vg_control_latency ${CMAKE_SOURCE_DIR}/bench/control_latency.c
                                  ${CMAKE_SOURCE_DIR}/src/cli/control_link.c)
target_include_directories(vg_control_latency PRIVATE ${CMAKE_SOURCE_DIR}/include
                                                      ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(vg_control_latency PRIVATE vigil_runtime)
add_test(NAME runtime_control.link COMMAND vg_control_latency 300)
set_tests_properties(runtime_control.link PROPERTIES TIMEOUT 60 LABELS sanitize)
