# `make install` / `cmake --install BUILD [--prefix P]` (with DESTDIR) and `cpack -G DEB`
# (docs/install.md): vigil, vigild, libvigil.so.0 (SONAME) and its headers, vigil.pc, the
# man pages (help2man, generated at build time from --help), bash completion, a systemd
# unit for vigild, and the Python module with its query library (python/).
# Every installed path that names another is relative or decided at install time, so the
# same build installs under any prefix, into a DESTDIR, and into the .deb (prefix /usr).
include(GNUInstallDirs)

# vigil finds libvigil.so.0 relative to its own folder (src/cli/subject.c).
file(RELATIVE_PATH VIGIL_LIBDIR_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
# (vigil-full, which the front end runs for some commands, sits beside it: src/cli/front_end.c)
target_compile_definitions(vigil_cli PRIVATE VIGIL_LIBDIR_FROM_BIN="${VIGIL_LIBDIR_FROM_BIN}")

install(TARGETS vigil vigil-full vigild RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS vigil_runtime LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        NAMELINK_COMPONENT Unspecified)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/vigil DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# vigil.pc: its prefix is ${pcfiledir} and the way up from LIBDIR/pkgconfig.
set(VIGIL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(VIGIL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
file(RELATIVE_PATH VIGIL_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" VIGIL_PC_TO_PREFIX "${VIGIL_PC_TO_PREFIX}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/vigil.pc.in ${CMAKE_BINARY_DIR}/vigil.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/vigil.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Man pages, from the built programs' --help: one per command `vigil --help` lists.
find_program(VIGIL_HELP2MAN help2man)
if(VIGIL_HELP2MAN)
  set(VIGIL_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  add_custom_command(
    OUTPUT ${VIGIL_MAN_DIR}/vigil.1
    COMMAND ${CMAKE_SOURCE_DIR}/cmake/gen_man.sh ${CMAKE_BINARY_DIR}/bin ${VIGIL_MAN_DIR}
            ${PROJECT_VERSION}
    DEPENDS vigil vigild ${CMAKE_SOURCE_DIR}/cmake/gen_man.sh
    COMMENT "man pages (help2man)")
  add_custom_target(vigil_man ALL DEPENDS ${VIGIL_MAN_DIR}/vigil.1)
  install(DIRECTORY ${VIGIL_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          FILES_MATCHING PATTERN "*.1")
else()
  message(WARNING "help2man not found (Debian: help2man; make deps): no man pages installed")
endif()

install(FILES ${CMAKE_SOURCE_DIR}/dist/vigil.bash RENAME vigil
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(CODE "
  file(CREATE_LINK vigil \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/bash-completion/completions/vigild\" SYMBOLIC)")

# The unit names vigild by its absolute path: written at install time, for the prefix
# installed into (cpack's /usr included).
install(CODE "
  set(BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  configure_file(\"${CMAKE_SOURCE_DIR}/dist/vigild.service.in\"
                 \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/vigild.service\" @ONLY)
  message(STATUS \"Installing: \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system/vigild.service\")")

# The Python module (python/vigil) and its engine, libvigilquery.so, in LIBDIR/vigil; the
# library keys the relations cache by the installed vigil's build id (src/querylib).
install(TARGETS vigil_querylib LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/vigil)
file(RELATIVE_PATH VIGIL_BIN_FROM_QUERYLIB ${CMAKE_INSTALL_FULL_LIBDIR}/vigil ${CMAKE_INSTALL_FULL_BINDIR})
target_compile_definitions(vigil_querylib PRIVATE VIGIL_BIN_FROM_QUERYLIB="${VIGIL_BIN_FROM_QUERYLIB}")
find_program(VIGIL_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH) # Debian's python3
set(VIGIL_PY_VERSION 3)
if(VIGIL_PYTHON3)
  execute_process(COMMAND ${VIGIL_PYTHON3} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE VIGIL_PY_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(VIGIL_PYTHON_DIR "" CACHE STRING
    "Where make install puts the Python module (relative to the prefix, or absolute; empty: Debian's dist-packages)")
install(CODE "
  set(VIGIL_SRC \"${CMAKE_SOURCE_DIR}\")
  set(VIGIL_LIBDIR \"${CMAKE_INSTALL_LIBDIR}\")
  set(VIGIL_PYTHON_DIR \"${VIGIL_PYTHON_DIR}\")
  set(VIGIL_PY_VERSION \"${VIGIL_PY_VERSION}\")")
install(SCRIPT ${CMAKE_SOURCE_DIR}/cmake/install_python.cmake)

# The Debian package: `cpack -G DEB` in the build folder (docs/install.md).
set(CPACK_PACKAGE_NAME vigil)
set(CPACK_PACKAGE_VENDOR vigil)
set(CPACK_PACKAGE_CONTACT "vigil developers <vigil@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "monitor for complex systems: traces as historical databases (CTF, TQuel)")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON) # dpkg-shlibdeps: libjansson4, libssl3, ...
# libdw1: loaded with dlopen by symbolization (src/model/symbolize.c), so dpkg-shlibdeps
# does not see it
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3, libdw1")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
include(CPack)
