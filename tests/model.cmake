# Behaviour models (src/model, `vigil model`, `vigil diff`, `vigil cdf`; docs/model.md):
# unit tests of the sketch, the format, the CDF walks (tests/model/model_unit.c), the
# commands on hand-written models with known answers (tests/model/cli_test.py), and a
# model built from a real recording checked against `vigil dump --json`
# (tests/model/record_test.py, with tests/model/subject.c).
add_executable(test_model_unit ${CMAKE_SOURCE_DIR}/tests/model/model_unit.c)
target_link_libraries(test_model_unit PRIVATE vigil_model)
add_test(NAME model.unit COMMAND test_model_unit)
set_tests_properties(model.unit PROPERTIES LABELS "sanitize;model" TIMEOUT 120)

find_program(MODEL_PYTHON3 python3 HINTS /usr/bin)
add_test(NAME model.cli COMMAND ${MODEL_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/model/cli_test.py
                                --bin ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(model.cli PROPERTIES LABELS "sanitize;model" TIMEOUT 120)

# The subject is built with debug information so that its call sites symbolize.
add_executable(model_subject ${CMAKE_SOURCE_DIR}/tests/model/subject.c)
target_compile_options(model_subject PRIVATE -g -O1)
target_link_libraries(model_subject PRIVATE Threads::Threads ${CMAKE_DL_LIBS})
if(NOT VIGIL_SANITIZE)
  add_test(NAME model.record
           COMMAND ${MODEL_PYTHON3} ${CMAKE_SOURCE_DIR}/tests/model/record_test.py
                   --bin ${CMAKE_BINARY_DIR}/bin --subject $<TARGET_FILE:model_subject>)
  set_tests_properties(model.record PROPERTIES LABELS model TIMEOUT 120
                       ENVIRONMENT "${VIGIL_TEST_ENV}")
endif()
