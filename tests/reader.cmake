# The trace reader (src/trace), `vigil dump` and `vigil recover`: unit tests on traces
# built byte by byte (tests/unit/reader_tracegen.c), end-to-end tests of the commands,
# and libFuzzer targets (VIGIL_FUZZ=ON with clang).
add_library(reader_tracegen STATIC ${CMAKE_SOURCE_DIR}/tests/unit/reader_tracegen.c)
add_executable(reader_mktrace ${CMAKE_SOURCE_DIR}/tests/unit/reader_mktrace.c)
target_link_libraries(reader_mktrace PRIVATE reader_tracegen)

if(CMOCKA_FOUND)
  foreach(t tsdl decode merge damage recover names source follow)
    add_executable(test_reader_${t} ${CMAKE_SOURCE_DIR}/tests/unit/reader_${t}.c)
    target_include_directories(test_reader_${t} PRIVATE ${CMAKE_SOURCE_DIR}/src
                               ${CMAKE_SOURCE_DIR}/tests/unit)
    target_link_libraries(test_reader_${t} PRIVATE vigil_trace reader_tracegen PkgConfig::CMOCKA)
    add_test(NAME reader_${t} COMMAND test_reader_${t})
    set_tests_properties(reader_${t} PROPERTIES LABELS "sanitize;reader" TIMEOUT 120)
  endforeach()
endif()

foreach(t dump recover babeltrace)
  add_test(NAME reader_e2e_${t}
           COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/e2e/reader_${t}.sh
                   $<TARGET_FILE:reader_mktrace>)
  set_tests_properties(reader_e2e_${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                       LABELS "reader" TIMEOUT 120 SKIP_RETURN_CODE 77)
endforeach()
set_tests_properties(reader_e2e_dump reader_e2e_recover PROPERTIES LABELS "sanitize;reader")
# The runtime's compact event headers, every escape to the extended one, both readers.
add_test(NAME reader_e2e_babeltrace_compact
         COMMAND /bin/sh ${CMAKE_SOURCE_DIR}/tests/e2e/reader_babeltrace.sh
                 $<TARGET_FILE:reader_mktrace>)
set_tests_properties(reader_e2e_babeltrace_compact PROPERTIES
                     ENVIRONMENT "${VIGIL_TEST_ENV};READER_SCENARIO=compact"
                     LABELS "reader" TIMEOUT 120 SKIP_RETURN_CODE 77)

option(VIGIL_FUZZ "Build the libFuzzer targets of the trace reader (clang only)" OFF)
if(VIGIL_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "VIGIL_FUZZ=ON needs clang (cmake -DCMAKE_C_COMPILER=clang)")
  endif()
  add_subdirectory(${CMAKE_SOURCE_DIR}/tests/fuzz ${CMAKE_BINARY_DIR}/tests/fuzz)
endif()
