# The launcher every test runs under (tests/test_launcher.sh, put before each command by
# the add_test wrapper in tests/CMakeLists.txt): its own TMPDIR, removed; what the test
# left running killed; exit status and stdin kept. tests.launcher itself is added with the
# builtin _add_test, not under the launcher it checks (one that lost the exit status would
# pass it); tests.launcher_wrapped is added as every test is: under it, arguments exact.
_add_test(NAME tests.launcher COMMAND /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/launcher_test.sh
                                      ${CMAKE_CURRENT_SOURCE_DIR}/test_launcher.sh)
add_test(NAME tests.launcher_wrapped
         COMMAND /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/launcher_test.sh --wrapped "" "a;b")
set_tests_properties(tests.launcher tests.launcher_wrapped PROPERTIES LABELS tests TIMEOUT 60)
