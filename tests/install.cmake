# tests/install.cmake: the installed tree used as a user would (included at
# the end of the top CMakeLists.txt; cmake/install.cmake has the rules).
#
#   install.consumer  tests/install/install.sh: cmake --install into a
#                     temporary prefix, then with only that prefix: tsaot
#                     --version; tsaot + tsaot-run on tiny_cnn against
#                     PyTorch; tests/install/consumer built with
#                     find_package(tsaot) + tsaot_add_model() and with
#                     pkg-config; the Python package compiling and running
#                     small_mlp (not in sanitizer builds: Debian's python3
#                     cannot load a sanitized library without the
#                     sanitizer's runtime preloaded). Skipped without
#                     pkg-config or numpy.

add_test(NAME install.consumer
         COMMAND bash ${CMAKE_SOURCE_DIR}/tests/install/install.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
                 ${CMAKE_BINARY_DIR}/install_test $<IF:$<OR:$<BOOL:${TSAOT_SANITIZE}>,$<BOOL:${TSAOT_TSAN}>>,sanitized,plain>)
set_tests_properties(install.consumer PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
