# The TQuel front end (src/tquel: lexer, parser, printer, errors): cmocka tests
# of the trees, of the example files (tests/query/tquel_good: canonical print = .golden,
# and the tree of both the source and the golden = .tree, written by hand, not printed;
# tests/query/tquel_bad: errors = .err) and of the round trip as a property, and a
# libFuzzer target (VIGIL_FUZZ=ON, clang). The programs link the room's library,
# vigil_tquel; the fuzz target compiles the sources in, instrumented.
set(TQUEL_TEST_DIR ${CMAKE_CURRENT_LIST_DIR}/query)
file(GLOB TQUEL_SOURCES ${CMAKE_SOURCE_DIR}/src/tquel/*.c)
list(APPEND TQUEL_SOURCES ${CMAKE_SOURCE_DIR}/src/common/caret.c)

# tquel_fmt FILE...: canonical text on stdout, errors on stderr (regenerates goldens)
add_executable(tquel_fmt ${TQUEL_TEST_DIR}/tquel_fmt.c)
target_link_libraries(tquel_fmt PRIVATE vigil_tquel)

if(CMOCKA_FOUND)
  foreach(t ast files roundtrip)
    add_executable(test_tquel_${t} ${TQUEL_TEST_DIR}/tquel_test_${t}.c)
    target_link_libraries(test_tquel_${t} PRIVATE vigil_tquel PkgConfig::CMOCKA)
    target_compile_definitions(test_tquel_${t} PRIVATE
      TQUEL_GOOD_DIR="${TQUEL_TEST_DIR}/tquel_good" TQUEL_BAD_DIR="${TQUEL_TEST_DIR}/tquel_bad")
    add_test(NAME query.tquel.${t} COMMAND test_tquel_${t})
    set_tests_properties(query.tquel.${t} PROPERTIES LABELS "sanitize;query" TIMEOUT 120)
  endforeach()
endif()

# One short run over the example files; longer, by hand:
#   build-fuzz/bin/fuzz_tquel -max_total_time=600 build-fuzz/tests/corpus_tquel \
#       tests/query/tquel_good tests/query/tquel_bad
if(VIGIL_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(TQUEL_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  add_executable(fuzz_tquel ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_tquel.c ${TQUEL_SOURCES})
  target_include_directories(fuzz_tquel PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(fuzz_tquel PRIVATE ${TQUEL_FUZZ_FLAGS})
  target_link_options(fuzz_tquel PRIVATE ${TQUEL_FUZZ_FLAGS})
  target_link_libraries(fuzz_tquel PRIVATE vigil_base_fuzz)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/corpus_tquel)
  add_test(NAME query_fuzz_tquel
           COMMAND fuzz_tquel -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                   ${CMAKE_CURRENT_BINARY_DIR}/corpus_tquel ${TQUEL_TEST_DIR}/tquel_good
                   ${TQUEL_TEST_DIR}/tquel_bad)
  set_tests_properties(query_fuzz_tquel PROPERTIES LABELS "query;fuzz" TIMEOUT 120)
endif()
