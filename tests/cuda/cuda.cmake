# tests/cuda/cuda.cmake: --device cuda without a GPU (included by the top
# CMakeLists.txt).
#
#   libfake_cuda.so        a stand-in for libcuda.so.1 (fake_libcuda.c) for
#                          unit.rt_cuda and the lit tests
#   cuda.zoo_ptx           the zoo's pointwise models compiled with --device
#                          cuda for sm_90 and sm_80, every PTX assembled by
#                          ptxas; skipped without ../shared/zoo or without
#                          /usr/local/cuda/bin/ptxas

add_library(fake_cuda MODULE ${CMAKE_SOURCE_DIR}/tests/cuda/fake_libcuda.c)
set_target_properties(fake_cuda PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cuda)
# ASan builds link their runtime into the executables only; the stand-in
# must not need it
target_compile_options(fake_cuda PRIVATE -fno-sanitize=all)
target_link_options(fake_cuda PRIVATE -fno-sanitize=all)
if(TARGET test_rt_cuda)
  add_dependencies(test_rt_cuda fake_cuda)
  target_compile_definitions(test_rt_cuda PRIVATE TSAOT_FAKE_LIBCUDA="$<TARGET_FILE:fake_cuda>")
endif()

set(TSAOT_PTXAS "/usr/local/cuda/bin/ptxas" CACHE FILEPATH "CUDA's PTX assembler, for the tests of --device cuda")
set(_cuda_zoo_models elementwise_chain lstm_cell mlp_gelu lstm2 control_flow)
if(NOT IS_DIRECTORY ${TSAOT_ZOO_DIR})
  add_test(NAME cuda.zoo_ptx COMMAND sh -c "echo 'cuda.zoo_ptx: ${TSAOT_ZOO_DIR} not found; skipped'; exit 77")
else()
  add_test(NAME cuda.zoo_ptx
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cuda/zoo_ptx.sh $<TARGET_FILE:tsaot> ${TSAOT_PTXAS} ${TSAOT_ZOO_DIR}
                   ${CMAKE_BINARY_DIR}/tests/cuda/zoo ${_cuda_zoo_models})
endif()
set_tests_properties(cuda.zoo_ptx PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
