# tests/python/python.cmake: the Python package (python/tsaot) on the
# fixtures, with Debian's python3 and the package from the source tree
# (PYTHONPATH=python; included by the top CMakeLists.txt).
#
#   python.package  tsaot.compile and tsaot.load on tests/fixtures and
#                   tests/python/fixtures: PyTorch's outputs from numpy
#                   arrays, Python values and torch tensors, zero-copy
#                   both ways, specs and names, errors
#                   (tests/python/test_package.py); skipped without numpy

#                   Not in sanitizer builds: Debian's python3 cannot load
#                   a sanitized library unless the sanitizer's runtime is
#                   preloaded ("ASan runtime does not come first").
if(NOT TSAOT_SANITIZE)
  add_test(NAME python.package COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/python/test_package.py)
  set_tests_properties(python.package PROPERTIES
                       ENVIRONMENT "PYTHONPATH=${CMAKE_SOURCE_DIR}/python;TSAOT=$<TARGET_FILE:tsaot>"
                       SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
