# Installation, packaging, the first run's quietness and the Python module (issue 28;
# docs/install.md, docs/python.md). Normal build only: the Python module loads its library
# with ctypes, which an ASan build cannot.
add_test(NAME install.deps_quiet COMMAND /bin/sh ${CMAKE_CURRENT_LIST_DIR}/install/deps_quiet_test.sh)
set_tests_properties(install.deps_quiet PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 120)
# The front end vigil loads none of the libraries of the commands it leaves to vigil-full,
# runs those in vigil-full in its place, says so in one line without it, and shares its
# relations cache with it (tests/install/front_end_test.py).
add_test(NAME install.front_end
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/install/front_end_test.py
                 ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(install.front_end PROPERTIES ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 300)
if(NOT VIGIL_DEP_HELP2MAN OR NOT VIGIL_DEP_PANDAS)
  return() # deps.help2man / deps.python3-pandas say what is missing
endif()
add_test(NAME install.destdir
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/install/install_test.py)
add_test(NAME install.deb COMMAND /bin/bash ${CMAKE_CURRENT_LIST_DIR}/install/deb_test.sh
                                  ${CMAKE_BINARY_DIR})
add_test(NAME python.module COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/install/python_test.py)
set_tests_properties(install.destdir install.deb python.module PROPERTIES
                     ENVIRONMENT "${VIGIL_TEST_ENV}" TIMEOUT 600 SKIP_RETURN_CODE 77)
# cpack stages a whole install: one at a time with the DESTDIR install.
set_tests_properties(install.destdir install.deb PROPERTIES RESOURCE_LOCK vigil_install)
