# tests/codegen.cmake: compiled code against PyTorch (included by the top
# CMakeLists.txt after tests/runtime.cmake, whose case lists it reuses).
#
#   fixtures.compiled      every fixture and pass fixture compiled by tsaot for
#                          its inputs, the .so run by tsaot-run, compared with
#                          PyTorch's outputs (tests/compile_run.sh)
#   conformance.zoo_compiled  the zoo the same way; skipped without ../shared
#   hostile.cli            tests/fixtures/hostile through tsaot: one-line errors
#                          within time and memory bounds (tests/hostile_cli.py)
#   firmware.run           examples/firmware: model.o linked statically, run
#                          from a static arena, malloc wrapped and counted

set(TSAOT_COMPILE_ENV "TSAOT=$<TARGET_FILE:tsaot>" "TSAOT_RUN=$<TARGET_FILE:tsaot-run>")
add_test(NAME fixtures.compiled
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/compare_npy.py
                 ${CMAKE_SOURCE_DIR}/tests/compile_run.sh ${TSAOT_OPT_CASE_DIRS})
set_tests_properties(fixtures.compiled PROPERTIES ENVIRONMENT "${TSAOT_COMPILE_ENV}" TIMEOUT 1800)

if(IS_DIRECTORY ${TSAOT_ZOO_DIR} AND EXISTS ${TSAOT_ZOO_DIR}/../tools/conformance)
  add_test(NAME conformance.zoo_compiled
           COMMAND ${TSAOT_PYTHON} ${TSAOT_ZOO_DIR}/../tools/conformance ${TSAOT_ZOO_DIR}
                   --cmd "${CMAKE_SOURCE_DIR}/tests/compile_run.sh {model} {inputs} -o {out}")
  set_tests_properties(conformance.zoo_compiled PROPERTIES ENVIRONMENT "${TSAOT_COMPILE_ENV}" TIMEOUT 3600)
else()
  add_test(NAME conformance.zoo_compiled
           COMMAND sh -c "echo 'conformance.zoo_compiled: ${TSAOT_ZOO_DIR} or its ../tools/conformance not found; skipped'; exit 77")
endif()
set_tests_properties(conformance.zoo_compiled PROPERTIES SKIP_RETURN_CODE 77)

# hostile.cli: every file of tests/fixtures/hostile (and its compile/)
# through tsaot itself: exit status 1 and one line saying "error:", within
# 1 s (10 s in the sanitizer build) and 512 MiB (not measured under ASan);
# ok_* files compile (tests/hostile_cli.py).
set(TSAOT_HOSTILE_FLAGS)
if(TSAOT_SANITIZE)
  set(TSAOT_HOSTILE_FLAGS --sanitized)
endif()
add_test(NAME hostile.cli
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/hostile_cli.py $<TARGET_FILE:tsaot>
                 ${CMAKE_SOURCE_DIR}/tests/fixtures/hostile ${TSAOT_HOSTILE_FLAGS})
set_tests_properties(hostile.cli PROPERTIES TIMEOUT 600)

include(${CMAKE_SOURCE_DIR}/examples/firmware/firmware.cmake OPTIONAL)
