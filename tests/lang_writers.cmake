# The Python, Java and Perl writers `vigil gen` makes (src/lang/gen_python*, gen_java*,
# gen_perl*), tests/lang_writers/run_writers.py:
#   lang_writers.python|java|perl programs generated from tests/lang_writers/writers.vgl
#                                 send to a real vigild started by the test; its trace
#                                 holds exactly what the generated C sensors record for
#                                 the same values (TCP for Python and Perl, the Unix socket
#                                 for Java); Perl's module passes perl -wc first
#   lang_writers.nocollector[-perl] no collector: emit never blocks, a full buffer drops, counted
#   lang_writers.restart[-perl]   the collector killed and restarted: each record once
#   lang_writers.probes-*         a stdlib fake collector decodes every frame strictly and
#                                 switches a sensor off with `probe ID off` (list, NOTE)
if(NOT VIGIL_SANITIZE)
  set(LANG_WRITERS_TESTS probes-python probes-java probes-perl nocollector-perl)
  if(TARGET vigild)
    list(APPEND LANG_WRITERS_TESTS python java perl nocollector restart restart-perl)
  endif()
  foreach(t ${LANG_WRITERS_TESTS})
    add_test(NAME lang_writers.${t}
             COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/lang_writers/run_writers.py ${t})
    set_tests_properties(lang_writers.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                         LABELS lang_writers TIMEOUT 300)
  endforeach()
endif()
