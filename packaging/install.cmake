# Installation and the Debian package (issue 32): `cmake --install build --prefix P` lays out
# P/bin, P/lib/issim (the display module), P/share/issim (scenes, assets with the contact maps,
# docs), man pages, a desktop entry, its icon and AppStream metainfo; `cpack` in a build dir
# makes issim_VERSION_ARCH.deb of the same tree under /usr. Fixed relative paths, not
# GNUInstallDirs: the executable finds ../lib/issim and ../share/issim beside its bin/
# (display_module.c, src/io/data_dir.c), so an installation can be moved, and Debian's
# multiarch lib/x86_64-linux-gnu would break that.

# The data directory's fallback for a program run from its build tree (scene_data_dir).
set_property(SOURCE src/io/data_dir.c APPEND PROPERTY COMPILE_DEFINITIONS
  ISSIM_SOURCE_TREE="${CMAKE_SOURCE_DIR}")

# `issim device sim` starts the device simulator from beside the executable.
install(TARGETS issim-pantosim RUNTIME DESTINATION bin)

# Scenes find their assets as ../assets/ from their folder (engine_asset_path), so the three
# folders keep the source tree's layout.
install(DIRECTORY scenes assets docs DESTINATION share/issim)
install(FILES README.md LICENSE DESTINATION share/doc/issim)
install(FILES packaging/issim.1 packaging/issim-mapgen.1 packaging/issim-pantosim.1
  DESTINATION share/man/man1)
install(FILES packaging/org.issim.issim.desktop DESTINATION share/applications)
install(FILES packaging/org.issim.issim.metainfo.xml DESTINATION share/metainfo)
install(FILES packaging/issim.svg DESTINATION share/icons/hicolor/scalable/apps)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME issim)
set(CPACK_PACKAGE_VENDOR "The issim authors")
set(CPACK_PACKAGE_CONTACT "The issim authors <maintainers@users.noreply.a-seed-f5d58af1.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "interactive simulator of rigid bodies in contact")
# One string: a CMake list would put semicolons in the control file.
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "issim simulates rigid bodies in contact with a choice of contact models (spring/damper, "
  "Hunt-Crossley, Hertz, bilinear, internal friction, contact-response maps), complementarity "
  "solvers and smooth contact on Bezier and Loop surfaces. Its GUI edits properties while the "
  "simulation runs; headless runs, parameter sweeps and fits share the same scenes, and a "
  "1 kHz servo drives a pantograph haptic device.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# dpkg-shlibdeps reads the libraries the binaries link and names their Debian packages
# (libsdl2-2.0-0, libglew2.2, libsundials-cvode6, liblua5.4-0, libgmsh4.11...), exact for the
# release the package is built on.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Python module (CMakeLists.txt, ISSIM_PYTHON) links no libpython: dpkg-shlibdeps cannot see
# that it needs the interpreter it was built for and numpy's C ABI (python3-numpy-abi9 is the
# ABI of Debian 12's numpy, 1.24).
if(ISSIM_PYTHON)
  math(EXPR ISSIM_PYTHON_NEXT "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}), python3 (<< ${Python3_VERSION_MAJOR}.${ISSIM_PYTHON_NEXT}), python3-numpy (>= 1:${Python3_NumPy_VERSION}), python3-numpy-abi9")
endif()
# Loaded at run time, not linked: the GL driver the display module's libGL dispatches to, the
# launcher `issim sweep` uses under mpirun.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libgl1-mesa-dri, openmpi-bin, gnuplot-nox")
# docs/python.md's example plots with matplotlib when it is there.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-matplotlib, python3-h5py")
include(CPack)

# tests/test_install.c installs this build with the cmake that configured it.
if(TARGET test_install)
  target_compile_definitions(test_install PRIVATE ISSIM_CMAKE="${CMAKE_COMMAND}")
  add_dependencies(test_install issim issimdisplay issim-mapgen issim-pantosim)
endif()
