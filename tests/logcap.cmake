# Log capture (docs/logcapture.md): a program using vigil's C log API (linked with
# libvigil), and unmodified programs calling syslog and stdio on stderr under
# `vigil record`; the raw model files they write are checked by logcap_test.py.
add_executable(logcap_api_subject ${CMAKE_SOURCE_DIR}/tests/logcap/api_subject.c)
target_link_libraries(logcap_api_subject PRIVATE vigil_runtime Threads::Threads)

# Not linked with libvigil: the preload of `vigil record` captures its calls.
add_executable(logcap_syslog_subject ${CMAKE_SOURCE_DIR}/tests/logcap/syslog_subject.c)
target_compile_options(logcap_syslog_subject PRIVATE -O1 -g -U_FORTIFY_SOURCE)
add_executable(logcap_syslog_fortify ${CMAKE_SOURCE_DIR}/tests/logcap/syslog_subject.c)
target_compile_options(logcap_syslog_fortify PRIVATE -O2 -g -U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2)

# Call sites that do not identify their statements: templates (docs/logcapture.md).
add_executable(logcap_tmpl_subject ${CMAKE_SOURCE_DIR}/tests/logcap/tmpl_subject.c)
target_compile_options(logcap_tmpl_subject PRIVATE -O1 -g -U_FORTIFY_SOURCE)
add_executable(logcap_tmpl_linked ${CMAKE_SOURCE_DIR}/tests/logcap/tmpl_subject.c)
target_compile_options(logcap_tmpl_linked PRIVATE -O1 -g -U_FORTIFY_SOURCE)
target_link_libraries(logcap_tmpl_linked PRIVATE vigil_runtime)

foreach(t api_sequence api_pass api_off api_kill api_fork syslog_plain syslog_fortify
          syslog_pass syslog_fork templates_wrap templates_flood templates_wrap_linked
          templates_flood_linked log_files log_files_linked log_fifo log_fifo_linked
          log_rotate log_rotate_linked)
  add_test(NAME logcap.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/logcap/logcap_test.py ${t})
  set_tests_properties(logcap.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120)
endforeach()
# The API subject links the (instrumented) libvigil and records without the preload.
set_tests_properties(logcap.api_sequence logcap.api_pass logcap.api_off logcap.api_kill
                     logcap.api_fork logcap.templates_wrap_linked
                     logcap.templates_flood_linked logcap.log_files_linked
                     logcap.log_fifo_linked logcap.log_rotate_linked PROPERTIES LABELS sanitize)
set_tests_properties(logcap.templates_flood logcap.templates_flood_linked PROPERTIES TIMEOUT 600)

# Message templates, level words and the formatting of templated messages
# (src/runtime/logcap_tmpl.c, logcap_fmt.c), unit-tested alone.
if(CMOCKA_FOUND)
  add_executable(test_logcap_tmpl ${CMAKE_SOURCE_DIR}/tests/unit/logcap_tmpl.c
                                  ${CMAKE_SOURCE_DIR}/src/runtime/logcap_tmpl.c
                                  ${CMAKE_SOURCE_DIR}/src/runtime/logcap_fmt.c)
  target_include_directories(test_logcap_tmpl PRIVATE ${CMAKE_SOURCE_DIR}/include
                                                      ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(test_logcap_tmpl PRIVATE PkgConfig::CMOCKA)
  add_test(NAME logcap.templates COMMAND test_logcap_tmpl)
  set_tests_properties(logcap.templates PROPERTIES LABELS sanitize)
endif()
