# libFuzzer target of the behaviour-model file reader (VIGIL_FUZZ=ON, clang): any bytes
# read without a crash, one-line errors, stable round trips (tests/fuzz/model_fuzz.c).
# The model's sources are compiled instrumented into the target. One short run over the
# seeds; longer, by hand:
#   build-fuzz/bin/fuzz_model -max_total_time=600 build-fuzz/tests/corpus_model \
#       tests/fuzz/model_seeds
if(VIGIL_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(FUZZ_MODEL_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
      -fno-omit-frame-pointer)
  set(FUZZ_MODEL_SOURCES sketch model jstr model_read model_write diff)
  list(TRANSFORM FUZZ_MODEL_SOURCES PREPEND ${CMAKE_SOURCE_DIR}/src/model/)
  list(TRANSFORM FUZZ_MODEL_SOURCES APPEND .c)
  add_executable(fuzz_model ${CMAKE_SOURCE_DIR}/tests/fuzz/model_fuzz.c ${FUZZ_MODEL_SOURCES}
                 ${CMAKE_SOURCE_DIR}/src/common/out_file.c)
  target_include_directories(fuzz_model PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(fuzz_model PRIVATE ${FUZZ_MODEL_FLAGS})
  target_link_options(fuzz_model PRIVATE ${FUZZ_MODEL_FLAGS})
  target_link_libraries(fuzz_model PRIVATE vigil_base_fuzz m)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/corpus_model)
  add_test(NAME model_fuzz_reader
           COMMAND fuzz_model -max_total_time=20 -timeout=10 -rss_limit_mb=2048
                   ${CMAKE_CURRENT_BINARY_DIR}/corpus_model
                   ${CMAKE_CURRENT_LIST_DIR}/fuzz/model_seeds)
  set_tests_properties(model_fuzz_reader PROPERTIES LABELS "model;fuzz" TIMEOUT 120)
endif()
