# Install-time part of `make install` for the Python module (cmake/install.cmake sets
# VIGIL_SRC, VIGIL_LIBDIR, VIGIL_PYTHON_DIR, VIGIL_PY_VERSION first): python/vigil goes
# where Debian's python3 looks for the prefix installed into (/usr: lib/python3/dist-packages,
# elsewhere lib/python3.X/dist-packages), with _install.py saying where the query library
# is, relative to the module, so a DESTDIR tree or a moved prefix still finds it.
set(pydir "${VIGIL_PYTHON_DIR}")
if(NOT pydir)
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(pydir lib/python3/dist-packages)
  else()
    set(pydir lib/python${VIGIL_PY_VERSION}/dist-packages)
  endif()
endif()
if(NOT IS_ABSOLUTE "${pydir}")
  set(pydir "${CMAKE_INSTALL_PREFIX}/${pydir}")
endif()
file(INSTALL "${VIGIL_SRC}/python/vigil/__init__.py" DESTINATION "${pydir}/vigil") # file(INSTALL) adds DESTDIR
file(RELATIVE_PATH rel "${pydir}/vigil"
     "${CMAKE_INSTALL_PREFIX}/${VIGIL_LIBDIR}/vigil/libvigilquery.so")
message(STATUS "Installing: $ENV{DESTDIR}${pydir}/vigil/_install.py")
file(WRITE "$ENV{DESTDIR}${pydir}/vigil/_install.py"
     "# Written by make install: the query library, relative to this folder.\nLIBRARY = \"${rel}\"\n")
