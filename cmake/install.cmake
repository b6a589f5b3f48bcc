# cmake/install.cmake: what `cmake --install` installs and how `cpack -G DEB`
# packages it (included once, at the end of the top CMakeLists.txt).
#
#   PREFIX/bin/           tsaot, tsaot-run, tsaot-dump, tsaot-opt, tsaot-bench
#   PREFIX/include/       tsaot.h (it includes <dlpack/dlpack.h>: Debian's
#                         libdlpack-dev, not installed here)
#   PREFIX/lib/tsaot/     the runtime's static libraries that tsaot links into
#                         every .so (tools/tsaot.c finds them from its own
#                         path, ../lib/tsaot) and that a -c object links with
#   PREFIX/lib/cmake/tsaot/   tsaotConfig.cmake (+ ConfigVersion): tsaot::tsaot,
#                         tsaot::runtime, tsaot_add_model()
#   PREFIX/lib/pkgconfig/tsaot.pc
#   PREFIX/lib/python3/dist-packages/tsaot/   the Python package (python/);
#                         its compile() finds PREFIX/bin/tsaot
#
# Relocatable: tsaot.pc and tsaotConfig.cmake name the prefix relative to
# their own folder, so a prefix can be moved (or unpacked by dpkg -x).

include(CMakePackageConfigHelpers)

set(TSAOT_INSTALL_TOOLS tsaot tsaot-run tsaot-dump tsaot-opt tsaot-bench)
foreach(t IN LISTS TSAOT_INSTALL_TOOLS)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION bin)
  endif()
endforeach()
install(FILES ${CMAKE_SOURCE_DIR}/include/tsaot.h DESTINATION include)

# The same libraries, in the same link order, as tools/tsaot.c links a .so
# with (TSAOT_RT_LIBS in the generated tsaot_link.h).
set(TSAOT_INSTALL_RT_LIBS tsaot_loader tsaot_fe tsaot_passes tsaot_rt tsaot_core tsaot_ir)
install(TARGETS ${TSAOT_INSTALL_RT_LIBS} ARCHIVE DESTINATION lib/tsaot)

# The system libraries they need, for tsaotConfig.cmake and tsaot.pc: the
# OpenBLAS tsaot links (its folder for -L: Debian keeps the pthread variant
# out of the default path), libzip, threads, libm, libdl.
# A sanitizer build's libraries need its runtime at link time, as
# tools/tsaot.c's link line does (TSAOT_LINK_FLAGS).
get_filename_component(TSAOT_OPENBLAS_DIR ${TSAOT_OPENBLAS_LIBRARY} DIRECTORY)
set(TSAOT_SAN_LINK_FLAGS "")
if(TSAOT_SANITIZE)
  set(TSAOT_SAN_LINK_FLAGS "-fsanitize=address,undefined")
elseif(TSAOT_TSAN)
  set(TSAOT_SAN_LINK_FLAGS "-fsanitize=thread")
endif()
set(TSAOT_PC_SYS_LIBS "-L${TSAOT_OPENBLAS_DIR} -lopenblas -lzip -lpthread -lm -ldl ${TSAOT_SAN_LINK_FLAGS}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/tsaot.pc.in ${CMAKE_BINARY_DIR}/install/tsaot.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/install/tsaot.pc DESTINATION lib/pkgconfig)

configure_file(${CMAKE_SOURCE_DIR}/cmake/tsaotConfig.cmake.in
               ${CMAKE_BINARY_DIR}/install/tsaotConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/tsaotConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/tsaotConfig.cmake
              ${CMAKE_BINARY_DIR}/install/tsaotConfigVersion.cmake
        DESTINATION lib/cmake/tsaot)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/tsaot DESTINATION lib/python3/dist-packages
        FILES_MATCHING PATTERN "*.py" PATTERN "README.md" PATTERN "__pycache__" EXCLUDE)

# ------------------------------------------------------------------- CPack
# `cpack -G DEB` in the build folder: tsaot_VERSION_ARCH.deb, under /usr.
# Depends: the libraries the tools load (dpkg-shlibdeps finds them: LLVM 16,
# libzip, OpenBLAS), plus what `tsaot -o x.so` links with at run time: a C
# compiler driver and the libraries' link-time files (libzip.so, the
# OpenBLAS libopenblas.so named in tsaot_link.h).
set(CPACK_PACKAGE_NAME tsaot)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "tsaot")
set(CPACK_PACKAGE_CONTACT "tsaot maintainers <tsaot@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Ahead-of-time compiler for TorchScript models (DLPack C ABI)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# the tools without their debug sections (cmake --install --strip)
set(CPACK_STRIP_FILES ON)
if(TSAOT_OPENBLAS_LIBRARY MATCHES "openblas-pthread")
  set(_tsaot_openblas_dev "libopenblas-pthread-dev")
elseif(TSAOT_OPENBLAS_LIBRARY MATCHES "openblas-openmp")
  set(_tsaot_openblas_dev "libopenblas-openmp-dev")
else()
  set(_tsaot_openblas_dev "libopenblas-dev")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "gcc | c-compiler, libzip-dev, ${_tsaot_openblas_dev}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-numpy, libdlpack-dev, pkg-config, cmake")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch")
include(CPack)
