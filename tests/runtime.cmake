# tests/runtime.cmake: the runtime's tests beyond tests/unit/test_*.c (which
# CMakeLists.txt registers itself: unit.ops runs the op-level cases of
# tests/fixtures/ops, unit.rt_npy the .npy reader). Included by the top
# CMakeLists.txt after TSAOT_ZOO_DIR is set.
#
#   fixtures.run         every tests/fixtures/<case>/ with model.pt and out*.npy
#                        through tsaot-run, compared with PyTorch's outputs
#                        (tests/compare_npy.py, tolerances from case.txt)
#   conformance.zoo_run  the zoo (../shared/zoo) through tsaot-run with the
#                        shared conformance tool; skipped without the zoo

# fe_classes and fe_functions hold constructs the frontend cannot compile yet
# (enums, fork closures, run-time isinstance).
file(GLOB TSAOT_RUN_MODELS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fixtures/*/model.pt)
set(TSAOT_RUN_CASE_DIRS)
foreach(m IN LISTS TSAOT_RUN_MODELS)
  get_filename_component(dir ${m} DIRECTORY)
  get_filename_component(name ${dir} NAME)
  if(EXISTS ${dir}/out0.npy AND EXISTS ${dir}/case.txt AND NOT name MATCHES "^(fe_classes|fe_functions)$")
    list(APPEND TSAOT_RUN_CASE_DIRS ${dir})
  endif()
endforeach()

add_test(NAME fixtures.run
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/compare_npy.py $<TARGET_FILE:tsaot-run>
                 ${TSAOT_RUN_CASE_DIRS})
if(IS_DIRECTORY ${TSAOT_ZOO_DIR} AND EXISTS ${TSAOT_ZOO_DIR}/../tools/conformance)
  add_test(NAME conformance.zoo_run
           COMMAND ${TSAOT_PYTHON} ${TSAOT_ZOO_DIR}/../tools/conformance ${TSAOT_ZOO_DIR}
                   --cmd "$<TARGET_FILE:tsaot-run> {model} {inputs} -o {out}")
  set_tests_properties(conformance.zoo_run PROPERTIES TIMEOUT 3600)
else()
  add_test(NAME conformance.zoo_run
           COMMAND sh -c "echo 'conformance.zoo_run: ${TSAOT_ZOO_DIR} or its ../tools/conformance not found (reconfigure once they are there); skipped'; exit 77")
endif()
set_tests_properties(conformance.zoo_run PROPERTIES SKIP_RETURN_CODE 77)

# The same cases, and the pass fixtures (tests/fixtures/passes/<case>/ and
# tests/fixtures/constprop/<case>/, made by make_pass_fixtures.py and
# make_constprop_fixtures.py), through the optimization pipeline: tsaot-run
# --optimize interprets the passes' output, specialised to the inputs.
file(GLOB TSAOT_PASS_MODELS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fixtures/passes/*/model.pt
     ${CMAKE_SOURCE_DIR}/tests/fixtures/constprop/*/model.pt)
set(TSAOT_OPT_CASE_DIRS ${TSAOT_RUN_CASE_DIRS})
foreach(m IN LISTS TSAOT_PASS_MODELS)
  get_filename_component(dir ${m} DIRECTORY)
  if(EXISTS ${dir}/out0.npy AND EXISTS ${dir}/case.txt)
    list(APPEND TSAOT_OPT_CASE_DIRS ${dir})
  endif()
endforeach()
add_test(NAME fixtures.run_optimized
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/compare_npy.py --arg --optimize
                 $<TARGET_FILE:tsaot-run> ${TSAOT_OPT_CASE_DIRS})
if(IS_DIRECTORY ${TSAOT_ZOO_DIR} AND EXISTS ${TSAOT_ZOO_DIR}/../tools/conformance)
  add_test(NAME conformance.zoo_run_optimized
           COMMAND ${TSAOT_PYTHON} ${TSAOT_ZOO_DIR}/../tools/conformance ${TSAOT_ZOO_DIR}
                   --cmd "$<TARGET_FILE:tsaot-run> --optimize {model} {inputs} -o {out}")
  set_tests_properties(conformance.zoo_run_optimized PROPERTIES TIMEOUT 3600)
else()
  add_test(NAME conformance.zoo_run_optimized
           COMMAND sh -c "echo 'conformance.zoo_run_optimized: ${TSAOT_ZOO_DIR} or its ../tools/conformance not found; skipped'; exit 77")
endif()
set_tests_properties(conformance.zoo_run_optimized PROPERTIES SKIP_RETURN_CODE 77)
