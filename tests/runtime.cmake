# The runtime: a subject linked with libvigil, and end-to-end tests through the real
# vigil binary, babeltrace2 and python3-bt2.
add_executable(vg_subject ${CMAKE_SOURCE_DIR}/tests/subjects/subject.c)
target_link_libraries(vg_subject PRIVATE vigil_runtime Threads::Threads)

foreach(t babeltrace_equality sigkill sigkill_linked size_cap bad_settings record_unmodified
          threads_and_exec flags relative_out signal_nesting compact_escape)
  add_test(NAME runtime_${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/runtime_e2e.py ${t})
  set_tests_properties(runtime_${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)
endforeach()
# Under the sanitizers: the subject linked with an instrumented libvigil, no preload.
set_tests_properties(runtime_bad_settings runtime_sigkill_linked runtime_relative_out
                     PROPERTIES LABELS sanitize)

if(CMOCKA_FOUND)
  add_executable(test_runtime_config ${CMAKE_SOURCE_DIR}/tests/unit/runtime_config.c
    ${CMAKE_SOURCE_DIR}/src/runtime/config.c ${CMAKE_SOURCE_DIR}/src/runtime/util.c)
  target_include_directories(test_runtime_config PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(test_runtime_config PRIVATE vigil_wire PkgConfig::CMOCKA)
  add_test(NAME runtime_config COMMAND test_runtime_config)
  set_tests_properties(runtime_config PROPERTIES LABELS sanitize)
endif()

# Consistent partial reporting: scripted scenarios, exact expectations (report_test.py).
add_executable(report_subject ${CMAKE_SOURCE_DIR}/tests/runtime/report_subject.c)
target_link_libraries(report_subject PRIVATE vigil_runtime Threads::Threads)
foreach(t calls calls_naive objects locks categories threads threads_positive suspend_resume
          forked synth_times shell_exec)
  add_test(NAME runtime_report.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/runtime/report_test.py ${t})
  set_tests_properties(runtime_report.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                       TIMEOUT 120 LABELS sanitize)
endforeach()
# Through `vigil record` (a preload into bash): not with the sanitizers' runtime.
set_tests_properties(runtime_report.shell_exec PROPERTIES LABELS "")

# VIGIL_LAYOUT=shared (issue 30): hundreds of short processes and instrumented programs
# at once into one directory and one metadata; exact counts through vigil and
# babeltrace2, bytes under the layout's ceiling and a fifth of one directory per image.
add_test(NAME runtime.shared_layout
         COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/shared_layout_test.py)
set_tests_properties(runtime.shared_layout PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)

# libvigil's initial-exec TLS stays small enough for dlopen (tests/runtime/static_tls_test.py).
add_test(NAME runtime.static_tls COMMAND /usr/bin/python3
         ${CMAKE_SOURCE_DIR}/tests/runtime/static_tls_test.py $<TARGET_FILE:vigil_runtime>)
set_tests_properties(runtime.static_tls PROPERTIES TIMEOUT 60)

# An exec'd image decides its process's end as its filter decided the begin.
add_test(NAME runtime.report_exec COMMAND /usr/bin/python3
         ${CMAKE_SOURCE_DIR}/tests/runtime/report_exec_test.py ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(runtime.report_exec PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120)
