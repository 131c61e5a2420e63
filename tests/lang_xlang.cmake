# Cross-language tests of the generated record code (Python, Java, C): the real `vigil gen`
# generates each language from tests/lang_xlang/*.vgl; the drivers write the shared vectors
# and must produce identical bytes, read each other's files, and survive schema evolution.
# Needs python3, javac/java (17) and cc. Java classes compile in one javac call per test.
foreach(t vectors evolution range malformed handmodel)
  add_test(NAME lang_xlang_${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/lang_xlang/run_xlang.py ${t})
  set_tests_properties(lang_xlang_${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)
endforeach()

# The Python and Java generators on a model built by hand, without the front end.
add_executable(lang_handmodel ${CMAKE_SOURCE_DIR}/tests/lang_xlang/handmodel.c
  ${CMAKE_SOURCE_DIR}/src/lang/gen_python.c ${CMAKE_SOURCE_DIR}/src/lang/gen_java.c
  ${CMAKE_SOURCE_DIR}/src/lang/gen_text.c)
target_include_directories(lang_handmodel PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(lang_handmodel PRIVATE vigil_common)

# Under the sanitizers: vigil gen and the generators run instrumented.
set_tests_properties(lang_xlang_vectors lang_xlang_handmodel PROPERTIES LABELS sanitize)
