# tests/abi/abi.cmake: forward arguments of every kind through the C ABI
# (include/tsaot.h's slots), on the fixtures of tests/fixtures/abi (made by
# tests/fixtures/make_abi_fixtures.py with PyTorch; included by the top
# CMakeLists.txt).
#
#   abi.fixtures   each model and form through tsaot-run (the interpreter,
#                  plain and --optimize) and through libraries compiled for
#                  each form, without examples and with --no-fallback:
#                  PyTorch's outputs, the fallback taken exactly off the
#                  specialisation (tests/abi/abi_run.py)
#   abi.args       libraries called directly through the ABI: TSAOT_NONE,
#                  list lengths, str bytes, input specs, run and run_static
#                  on and off the specialisation, and every malformed slot
#                  refused with a reason naming it (tests/abi/abi_args.c)

file(GLOB TSAOT_ABI_CASES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fixtures/abi/*/case.txt)
set(TSAOT_ABI_CASE_DIRS)
foreach(c IN LISTS TSAOT_ABI_CASES)
  get_filename_component(dir ${c} DIRECTORY)
  list(APPEND TSAOT_ABI_CASE_DIRS ${dir})
endforeach()
add_test(NAME abi.fixtures
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/abi/abi_run.py $<TARGET_FILE:tsaot>
                 $<TARGET_FILE:tsaot-run> ${TSAOT_ABI_CASE_DIRS})

add_executable(abi_args ${CMAKE_SOURCE_DIR}/tests/abi/abi_args.c)
set_target_properties(abi_args PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/abi)
target_include_directories(abi_args PRIVATE ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(abi_args PRIVATE tsaot_so_load tsaot_rt ${CMAKE_DL_LIBS} ${TSAOT_LIBM})
add_dependencies(abi_args tsaot)
add_test(NAME abi.args
         COMMAND abi_args $<TARGET_FILE:tsaot> ${CMAKE_SOURCE_DIR}/tests/fixtures/abi ${CMAKE_BINARY_DIR}/tests/abi)
set_tests_properties(abi.fixtures abi.args PROPERTIES TIMEOUT 900)
