# USDT probe sites as sensors (docs/usdt.md; tests/usdt/usdt_test.py): vigil usdt list on
# our SDT subject (built by the test with gcc and clang, -O0 and -O2), Debian's PostgreSQL
# and libc; vigil record --usdt checked value by value; stripped and already patched
# sites; PostgreSQL under pgbench, and with its buffer pool too small and ample (vigil
# model and vigil diff); run-time switching through vigil probes. Through the preload, a
# test cannot run under the sanitizers (the subject is not built with them): `linked`
# arms the same subject linked with libvigil, which the sanitizer build checks.
if(VIGIL_DEP_SDT_H)
  add_executable(usdt_subject_linked ${CMAKE_SOURCE_DIR}/tests/usdt/sdt_subject.c)
  target_compile_options(usdt_subject_linked PRIVATE -O2 -g)
  target_link_libraries(usdt_subject_linked PRIVATE vigil_runtime)
  find_program(USDT_PYTHON3 python3 HINTS /usr/bin)
  set(usdt_env "${VIGIL_TEST_ENV};USDT_LINKED=$<TARGET_FILE:usdt_subject_linked>")
  foreach(t list record bad linked probes dlopen threads model collector cache)
    add_test(NAME usdt.${t}
             COMMAND ${USDT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/usdt/usdt_test.py ${t})
    set(labels usdt)
    if(t STREQUAL "list" OR t STREQUAL "linked" OR t STREQUAL "cache")
      set(labels "usdt;sanitize")
    endif()
    set_tests_properties(usdt.${t} PROPERTIES ENVIRONMENT "${usdt_env}" TIMEOUT 300
                         LABELS "${labels}")
  endforeach()
  # the jump path's recorder object: no vector or x87 register, no call out of it
  add_test(NAME usdt.general_regs
           COMMAND ${USDT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/usdt/usdt_test.py general_regs)
  set_tests_properties(usdt.general_regs PROPERTIES ENVIRONMENT
    "${usdt_env};USDT_RECORD_OBJ=${CMAKE_BINARY_DIR}/src/runtime/CMakeFiles/vigil_runtime.dir/usdt_record.c.o"
    TIMEOUT 60 LABELS "usdt;sanitize")
  if(VIGIL_DEP_PG AND NOT VIGIL_SANITIZE)
    add_test(NAME usdt.postgres
             COMMAND ${USDT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/usdt/usdt_test.py postgres)
    set_tests_properties(usdt.postgres PROPERTIES ENVIRONMENT "${usdt_env}" TIMEOUT 300
                         LABELS usdt RUN_SERIAL TRUE)
    # the buffer-pool scenario: two servers, pgbench -i and 400 transactions each
    add_test(NAME usdt.bufferpool
             COMMAND ${USDT_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/usdt/usdt_test.py bufferpool)
    set_tests_properties(usdt.bufferpool PROPERTIES ENVIRONMENT "${usdt_env}" TIMEOUT 600
                         LABELS usdt RUN_SERIAL TRUE)
  endif()
endif()
