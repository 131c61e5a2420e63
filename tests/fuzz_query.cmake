# libFuzzer target of the whole TQuel engine (VIGIL_FUZZ=ON, clang): arbitrary query text
# parsed, bound, planned, executed and written in every format over a small database
# built in LLVMFuzzerInitialize from a trace written byte by byte (tests/fuzz/fuzz_query.c).
# The engine (src/relations, src/tquel, src/query, src/live) is compiled instrumented into
# the target; the trace reader and the trace writer are linked as they are. One short run over the seeds; longer, by hand:
#   build-fuzz/bin/fuzz_query -max_total_time=600 -timeout=10 -rss_limit_mb=2048 \
#       build-fuzz/tests/corpus_query tests/query/fuzz_query_seeds
if(VIGIL_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(FUZZ_QUERY_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  file(GLOB FUZZ_QUERY_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/relations/*.c
       ${CMAKE_SOURCE_DIR}/src/tquel/*.c ${CMAKE_SOURCE_DIR}/src/query/*.c
       ${CMAKE_SOURCE_DIR}/src/live/*.c)
  add_executable(fuzz_query ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_query.c ${FUZZ_QUERY_SOURCES})
  target_include_directories(fuzz_query PRIVATE ${CMAKE_SOURCE_DIR}/src
                             ${CMAKE_SOURCE_DIR}/tests/unit)
  target_compile_options(fuzz_query PRIVATE ${FUZZ_QUERY_FLAGS})
  target_link_options(fuzz_query PRIVATE ${FUZZ_QUERY_FLAGS})
  target_link_libraries(fuzz_query PRIVATE reader_tracegen vigil_check vigil_trace vigil_common
                        PkgConfig::SQLITE3 m)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/corpus_query)
  add_test(NAME query_fuzz_query
           COMMAND fuzz_query -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                   ${CMAKE_CURRENT_BINARY_DIR}/corpus_query
                   ${CMAKE_CURRENT_LIST_DIR}/query/fuzz_query_seeds)
  set_tests_properties(query_fuzz_query PROPERTIES LABELS "query;fuzz" TIMEOUT 120)
endif()
