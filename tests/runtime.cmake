# The runtime: a subject linked with libvigil, and end-to-end tests through the real
# vigil binary, babeltrace2 and python3-bt2.
add_executable(vg_subject ${CMAKE_SOURCE_DIR}/tests/subjects/subject.c)
target_link_libraries(vg_subject PRIVATE vigil_runtime Threads::Threads)

foreach(t babeltrace_equality sigkill sigkill_linked size_cap bad_settings record_unmodified
          threads_and_exec flags relative_out signal_nesting compact_escape listeners_headers)
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

# A sensor compiled against vigil.h of ABI 0 (6-byte headers) is refused at load, loudly;
# the same sensor against today's header records every event (tests/runtime/abi_test.py).
add_executable(abi_subject ${CMAKE_SOURCE_DIR}/tests/runtime/abi_subject.c)
target_link_libraries(abi_subject PRIVATE vigil_runtime)
# The ABI 0 sensor linked against a stand-in for the libvigil it was built with (same
# SONAME); at run time its run path finds today's libvigil.so.0 first.
add_library(vigil_abi0 SHARED ${CMAKE_SOURCE_DIR}/tests/runtime/abi0/libvigil_abi0.c)
target_include_directories(vigil_abi0 PRIVATE ${CMAKE_SOURCE_DIR}/include)
set_target_properties(vigil_abi0 PROPERTIES NO_SONAME ON
                      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/abi0)
target_link_options(vigil_abi0 PRIVATE -Wl,-soname,libvigil.so.0)
add_executable(abi0_subject ${CMAKE_SOURCE_DIR}/tests/runtime/abi_subject.c)
target_compile_definitions(abi0_subject PRIVATE ABI0)
target_include_directories(abi0_subject PRIVATE ${CMAKE_SOURCE_DIR}/tests/runtime
                                                ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(abi0_subject PRIVATE vigil_abi0)
set_target_properties(abi0_subject PROPERTIES SKIP_BUILD_RPATH ON)
target_link_options(abi0_subject PRIVATE "-Wl,-rpath,$<TARGET_FILE_DIR:vigil_runtime>")
add_test(NAME runtime.old_abi COMMAND /usr/bin/python3
         ${CMAKE_SOURCE_DIR}/tests/runtime/abi_test.py ${CMAKE_BINARY_DIR}/bin
         $<TARGET_FILE:abi0_subject> $<TARGET_FILE:abi_subject>)
set_tests_properties(runtime.old_abi PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 180)

# Several listeners get a thread's last event although the thread never records again
# (copied at the process's end; tests/runtime/listen_exit_test.py).
add_executable(listen_exit_subject ${CMAKE_SOURCE_DIR}/tests/runtime/listen_exit_subject.c)
target_link_libraries(listen_exit_subject PRIVATE vigil_runtime Threads::Threads)
add_test(NAME runtime.listen_exit COMMAND /usr/bin/python3
         ${CMAKE_SOURCE_DIR}/tests/runtime/listen_exit_test.py ${CMAKE_BINARY_DIR}/bin
         $<TARGET_FILE:listen_exit_subject>)
set_tests_properties(runtime.listen_exit PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120)
