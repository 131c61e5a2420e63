# The base room (src/base): checked allocation, arenas, UTF-8 validation, whole-file I/O.
if(CMOCKA_FOUND)
  add_executable(test_base ${CMAKE_SOURCE_DIR}/tests/unit/base_test.c)
  target_link_libraries(test_base PRIVATE vigil_base reader_tracegen PkgConfig::CMOCKA)
  add_test(NAME base.unit COMMAND test_base)
  set_tests_properties(base.unit PROPERTIES LABELS "sanitize;base" TIMEOUT 120)
  # The common room's threads (src/common/pool.c): every piece run once, by workers
  # numbered below the threads asked for (tests/unit/pool_test.c).
  add_executable(test_pool ${CMAKE_SOURCE_DIR}/tests/unit/pool_test.c)
  target_link_libraries(test_pool PRIVATE vigil_common PkgConfig::CMOCKA)
  add_test(NAME common.pool COMMAND test_pool)
  set_tests_properties(common.pool PROPERTIES LABELS "sanitize;base" TIMEOUT 120)
endif()

# The fuzz targets compile the rooms they test instrumented; the base room beside them.
if(VIGIL_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  add_library(vigil_base_fuzz STATIC ${VIGIL_BASE_SOURCES})
  target_include_directories(vigil_base_fuzz PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_compile_options(vigil_base_fuzz PRIVATE -fsanitize=fuzzer-no-link,address,undefined
                         -fno-sanitize-recover=all -fno-omit-frame-pointer)
endif()
