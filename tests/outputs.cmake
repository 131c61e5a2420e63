# Outputs that never harm what they replace (src/common/out_file.h): every command that
# writes a file, pointed at a device node, a FIFO, a regular file, a link and a folder.
# Not under the sanitizers: the fixture records through the preload.
foreach(t files gen database)
  add_test(NAME outputs.${t}
           COMMAND /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/e2e/outputs_test.py ${t})
  set_tests_properties(outputs.${t} PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 180)
endforeach()
