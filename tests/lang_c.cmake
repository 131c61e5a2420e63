# The C generator (src/lang/gen_c*.c). The test programs are compiled from code that the
# `vigil gen` built here generates at build time, with the project's -Wall -Wextra -Werror:
#   lang_c.records     encoders and decoders: exact bytes of docs/encoding.md, round trips,
#                      defaults for missing fields, extra bytes skipped, evolution v1 <-> v2
#   lang_c.trace.*     generated sensors recorded (VIGIL_OUT) and read back by vigil dump
#                      and babeltrace2: every value, cuts at max, struct payloads, flags
#   lang_c.refused     a field named by a CTF keyword is refused
#   lang_c.ops.*       sensors with an op (invocations, a lock held, objects created and
#                      reclaimed) recorded with reporting suspended and narrowed: the
#                      reported stream keeps the rules of docs/consistency.md
set(LANG_C_SRC ${CMAKE_SOURCE_DIR}/tests/lang_c)
set(LANG_C_GEN ${CMAKE_CURRENT_BINARY_DIR}/lang_c_gen)
function(lang_c_generate vgl pkg)
  add_custom_command(
    OUTPUT ${LANG_C_GEN}/${pkg}_sensors.h ${LANG_C_GEN}/${pkg}_sensors.c
    COMMAND $<TARGET_FILE:vigil> gen ${LANG_C_SRC}/${vgl}.vgl --lang c -o ${LANG_C_GEN}
    DEPENDS vigil ${LANG_C_SRC}/${vgl}.vgl
    COMMENT "vigil gen tests/lang_c/${vgl}.vgl --lang c")
endfunction()
lang_c_generate(all allc)
lang_c_generate(evolve_v1 evo1)
lang_c_generate(evolve_v2 evo2)
lang_c_generate(ops opsc)
# Every op and flag placement (tests/lang/good/ops.vgl): compiled warning-free below.
add_custom_command(
  OUTPUT ${LANG_C_GEN}/ops_sensors.h ${LANG_C_GEN}/ops_sensors.c
  COMMAND $<TARGET_FILE:vigil> gen ${CMAKE_SOURCE_DIR}/tests/lang/good/ops.vgl --lang c
          -o ${LANG_C_GEN}
  DEPENDS vigil ${CMAKE_SOURCE_DIR}/tests/lang/good/ops.vgl
  COMMENT "vigil gen tests/lang/good/ops.vgl --lang c")
add_custom_target(lang_c_ops_all ALL DEPENDS ${LANG_C_GEN}/ops_sensors.c)

add_executable(lang_c_sensors ${LANG_C_SRC}/sensors.c ${LANG_C_GEN}/allc_sensors.c)
add_executable(lang_c_records ${LANG_C_SRC}/records.c ${LANG_C_GEN}/allc_sensors.c
                              ${LANG_C_GEN}/evo1_sensors.c ${LANG_C_GEN}/evo2_sensors.c)
add_executable(lang_c_ops ${LANG_C_SRC}/ops.c ${LANG_C_GEN}/opsc_sensors.c)
foreach(t lang_c_sensors lang_c_records lang_c_ops)
  target_include_directories(${t} PRIVATE ${CMAKE_SOURCE_DIR}/include ${LANG_C_SRC} ${LANG_C_GEN})
  target_link_libraries(${t} PRIVATE vigil_runtime)
endforeach()

add_test(NAME lang_c.records COMMAND lang_c_records)
foreach(t values metadata sensor_off)
  add_test(NAME lang_c.trace.${t}
           COMMAND /usr/bin/python3 ${LANG_C_SRC}/check_trace.py $<TARGET_FILE:lang_c_sensors> ${t})
  set_tests_properties(lang_c.trace.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 60)
endforeach()
foreach(t stream metadata naive)
  add_test(NAME lang_c.ops.${t}
           COMMAND /usr/bin/python3 ${LANG_C_SRC}/check_ops.py $<TARGET_FILE:lang_c_ops> ${t})
  set_tests_properties(lang_c.ops.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 60
                       LABELS sanitize)
endforeach()
add_test(NAME lang_c.refused
         COMMAND ${LANG_C_SRC}/refused.sh $<TARGET_FILE:vigil> ${LANG_C_SRC}/ctf_keyword.vgl)
set_tests_properties(lang_c.records lang_c.trace.values lang_c.trace.metadata
                     lang_c.trace.sensor_off lang_c.refused PROPERTIES LABELS sanitize)

# The generated code also compiles warning-free with clang (its -Wunused-function is
# stricter than gcc's about static inline functions in a source file).
find_program(LANG_C_CLANG clang)
if(LANG_C_CLANG)
  add_test(NAME lang_c.clang
           COMMAND ${LANG_C_CLANG} -std=gnu11 -Wall -Wextra -Werror -fsyntax-only
                   -I${CMAKE_SOURCE_DIR}/include -I${LANG_C_SRC} -I${LANG_C_GEN}
                   ${LANG_C_GEN}/allc_sensors.c ${LANG_C_GEN}/evo1_sensors.c
                   ${LANG_C_GEN}/evo2_sensors.c ${LANG_C_GEN}/opsc_sensors.c ${LANG_C_GEN}/ops_sensors.c
                   ${LANG_C_SRC}/sensors.c
                   ${LANG_C_SRC}/records.c ${LANG_C_SRC}/ops.c)
endif()

# Subjects compiled as strict ISO C11 (no GNU extensions) can include vigil.h and the
# generated code.
add_test(NAME lang_c.c11
         COMMAND ${CMAKE_C_COMPILER} -std=c11 -Wall -Wextra -Werror -fsyntax-only
                 -I${CMAKE_SOURCE_DIR}/include -I${LANG_C_SRC} -I${LANG_C_GEN}
                 ${LANG_C_GEN}/allc_sensors.c ${LANG_C_GEN}/evo1_sensors.c
                 ${LANG_C_GEN}/evo2_sensors.c ${LANG_C_GEN}/opsc_sensors.c ${LANG_C_SRC}/ops.c
                 ${LANG_C_GEN}/ops_sensors.c)

# Sampling (docs/watch.md "Sampling"): a fake monitor samples a generated sampled
# interval sensor at the ticks of a clock (tests/lang_c/sample_test.py).
lang_c_generate(sample samp)
add_executable(lang_c_sample ${LANG_C_SRC}/sample.c ${LANG_C_GEN}/samp_sensors.c)
target_include_directories(lang_c_sample PRIVATE ${CMAKE_SOURCE_DIR}/include ${LANG_C_GEN})
target_link_libraries(lang_c_sample PRIVATE vigil_runtime)
foreach(t sampled traced refused once)
  add_test(NAME lang_c.sample.${t}
           COMMAND /usr/bin/python3 ${LANG_C_SRC}/sample_test.py ${t}
                   $<TARGET_FILE:lang_c_sample>)
  set_tests_properties(lang_c.sample.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}"
                       TIMEOUT 120 LABELS sanitize)
endforeach()
