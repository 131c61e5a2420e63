# Sensor descriptions embedded in programs by vigil gen --lang c (issue 28, item 5):
# vigil relations PROGRAM, vigil watch and vigil ui --watch without --sensors.
add_test(NAME embed.mailbox COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/embed/embedded_test.py)
set_tests_properties(embed.mailbox PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 600)
