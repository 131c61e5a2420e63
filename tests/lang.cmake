# The sensor description language (src/lang) and `vigil gen`: unit tests of the checked
# model (cmocka), every bad file under tests/lang/bad with its expected errors, every good
# file under tests/lang/good, and a libFuzzer target of the front end (VIGIL_FUZZ=ON).
find_program(LANGFE_PYTHON3 python3 HINTS /usr/bin)
set(LANGFE_DIR ${CMAKE_CURRENT_LIST_DIR}/lang)

if(CMOCKA_FOUND)
  add_executable(test_lang_model ${LANGFE_DIR}/test_model.c)
  target_link_libraries(test_lang_model PRIVATE vigil_lang reader_tracegen PkgConfig::CMOCKA)
  target_compile_definitions(test_lang_model PRIVATE VGL_GOOD_DIR="${LANGFE_DIR}/good")
  add_test(NAME lang.model COMMAND test_lang_model)
  set_tests_properties(lang.model PROPERTIES LABELS "sanitize;lang" TIMEOUT 60)
endif()

file(GLOB LANGFE_bad ${LANGFE_DIR}/bad/*.vgl)
file(GLOB LANGFE_good ${LANGFE_DIR}/good/*.vgl)
foreach(kind bad good)
  foreach(f ${LANGFE_${kind}})
    get_filename_component(name ${f} NAME_WE)
    add_test(NAME lang.${kind}.${name}
             COMMAND ${LANGFE_PYTHON3} ${LANGFE_DIR}/check_vgl.py $<TARGET_FILE:vigil> ${kind} ${f})
    set_tests_properties(lang.${kind}.${name} PROPERTIES LABELS "sanitize;lang" TIMEOUT 60)
  endforeach()
endforeach()

# Bad input of every kind: garbage, huge files, deep nesting, special files.
add_test(NAME lang.robust COMMAND /bin/sh ${LANGFE_DIR}/robust.sh $<TARGET_FILE:vigil>)
add_test(NAME lang.cli COMMAND /bin/sh ${LANGFE_DIR}/cli.sh $<TARGET_FILE:vigil> ${LANGFE_DIR})
set_tests_properties(lang.robust lang.cli PROPERTIES LABELS "sanitize;lang" TIMEOUT 120)

# The front end alone (no generators), instrumented for libFuzzer; one short run over the
# seeds (tests/lang/good and bad). Longer, by hand:
#   build-fuzz/bin/fuzz_vgl -max_total_time=600 build-fuzz/tests/corpus_vgl tests/lang/good
if(VIGIL_FUZZ)
  set(LANGFE_FRONT arena check check_record check_sensor diag lex load names parse symtab)
  list(TRANSFORM LANGFE_FRONT PREPEND ${CMAKE_SOURCE_DIR}/src/lang/)
  list(TRANSFORM LANGFE_FRONT APPEND .c)
  list(APPEND LANGFE_FRONT ${CMAKE_SOURCE_DIR}/src/common/caret.c)
  set(LANGFE_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_executable(fuzz_vgl ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_vgl.c ${LANGFE_FRONT})
  target_include_directories(fuzz_vgl PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(fuzz_vgl PRIVATE ${LANGFE_FUZZ_FLAGS})
  target_link_options(fuzz_vgl PRIVATE ${LANGFE_FUZZ_FLAGS})
  target_link_libraries(fuzz_vgl PRIVATE vigil_base_fuzz)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/corpus_vgl)
  add_test(NAME lang_fuzz_vgl
           COMMAND fuzz_vgl -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                   ${CMAKE_CURRENT_BINARY_DIR}/corpus_vgl ${LANGFE_DIR}/good ${LANGFE_DIR}/bad)
  set_tests_properties(lang_fuzz_vgl PROPERTIES LABELS "lang;fuzz" TIMEOUT 120)
endif()

# Name clashes in the generated code, found by sorting; 10,000 fields in every language.
add_test(NAME lang.gen_names COMMAND /bin/sh ${LANGFE_DIR}/gen_names.sh $<TARGET_FILE:vigil>)
set_tests_properties(lang.gen_names PROPERTIES LABELS "sanitize;lang" TIMEOUT 120)
