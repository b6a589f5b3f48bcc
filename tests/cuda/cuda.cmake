# tests/cuda/cuda.cmake: --device cuda without a GPU (included by the top
# CMakeLists.txt).
#
#   libfake_cuda.so        a stand-in for libcuda.so.1 (fake_libcuda.c) for
#                          unit.rt_cuda and the lit tests
#   libfake_cublas.so      a stand-in for libcublas (fake_libcublas.c), GEMMs
#                          on the stand-in driver's host "device memory", for
#                          unit.rt_cublas; libfake_cublas_nonames.so the same
#                          without cublasGetStatusName/String
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

add_library(fake_cublas MODULE ${CMAKE_SOURCE_DIR}/tests/cuda/fake_libcublas.c)
add_library(fake_cublas_nonames MODULE ${CMAKE_SOURCE_DIR}/tests/cuda/fake_libcublas.c)
target_compile_definitions(fake_cublas_nonames PRIVATE FAKE_CUBLAS_NO_STATUS_NAMES)
foreach(t fake_cublas fake_cublas_nonames)
  set_target_properties(${t} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cuda)
  target_compile_options(${t} PRIVATE -fno-sanitize=all)
  target_link_options(${t} PRIVATE -fno-sanitize=all)
endforeach()
if(TARGET test_rt_cublas)
  add_dependencies(test_rt_cublas fake_cuda fake_cublas fake_cublas_nonames)
  target_compile_definitions(test_rt_cublas PRIVATE TSAOT_FAKE_LIBCUDA="$<TARGET_FILE:fake_cuda>"
                             TSAOT_FAKE_LIBCUBLAS="$<TARGET_FILE:fake_cublas>"
                             TSAOT_FAKE_LIBCUBLAS_NONAMES="$<TARGET_FILE:fake_cublas_nonames>")
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

# The GPU run path without a GPU (runtime/hosted/gpu.h): libraries built with
# --device cuda --cuda-emulate, run by tsaot-run --device cuda against the
# stand-in driver (which runs each kernel's CPU form thread by thread and
# fills new device memory with NaN bytes) and the stand-in cuBLAS.
#   fixtures.gpu_emulated     every compiled fixture, outputs against PyTorch's
#   cuda.gpu_run              chosen fixtures: outputs, and at least so many
#                             kernel launches and cuBLAS calls (gpu_run.sh)
#   conformance.zoo_gpu_emulated  the zoo the same way; skipped without ../shared
set(TSAOT_GPU_ENV ${TSAOT_COMPILE_ENV} "TSAOT_RUN_DEVICE=cuda" "TSAOT_LIBCUDA=$<TARGET_FILE:fake_cuda>"
    "TSAOT_LIBCUBLAS=$<TARGET_FILE:fake_cublas>")
set(TSAOT_GPU_TSAOT_ARGS --arg --device --arg cuda --arg --cuda-emulate)
add_test(NAME fixtures.gpu_emulated
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/compare_npy.py ${TSAOT_GPU_TSAOT_ARGS}
                 ${CMAKE_SOURCE_DIR}/tests/compile_run.sh ${TSAOT_OPT_CASE_DIRS})
set_tests_properties(fixtures.gpu_emulated PROPERTIES ENVIRONMENT "${TSAOT_GPU_ENV}" TIMEOUT 1800)
add_test(NAME cuda.gpu_run
         COMMAND sh ${CMAKE_SOURCE_DIR}/tests/cuda/gpu_run.sh $<TARGET_FILE:tsaot> $<TARGET_FILE:tsaot-run>
                 ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests ${CMAKE_BINARY_DIR}/tests/cuda/gpu_run
                 pointwise_libm:2:0 small_mlp:1:4 loops:10:0 fe_tensor_ops:4:0 lstm_cell:0:2 tiny_cnn:0:0)
set_tests_properties(cuda.gpu_run PROPERTIES ENVIRONMENT "${TSAOT_GPU_ENV}" TIMEOUT 600)
if(IS_DIRECTORY ${TSAOT_ZOO_DIR} AND EXISTS ${TSAOT_ZOO_DIR}/../tools/conformance)
  add_test(NAME conformance.zoo_gpu_emulated
           COMMAND ${TSAOT_PYTHON} ${TSAOT_ZOO_DIR}/../tools/conformance ${TSAOT_ZOO_DIR}
                   --cmd "${CMAKE_SOURCE_DIR}/tests/compile_run.sh {model} {inputs} -o {out} --device cuda --cuda-emulate")
  set_tests_properties(conformance.zoo_gpu_emulated PROPERTIES ENVIRONMENT "${TSAOT_GPU_ENV}" TIMEOUT 3600)
else()
  add_test(NAME conformance.zoo_gpu_emulated
           COMMAND sh -c "echo 'conformance.zoo_gpu_emulated: ${TSAOT_ZOO_DIR} or its ../tools/conformance not found; skipped'; exit 77")
endif()
set_tests_properties(conformance.zoo_gpu_emulated PROPERTIES SKIP_RETURN_CODE 77)

# cuda.gpu_abi: the GPU run path through the C ABI (tests/cuda/gpu_abi.c):
# set_device's refusals, host and kDLCUDA inputs, run_static, device memory
# reused across runs and freed by release, two threads at once; small_mlp
# and pointwise_libm compiled at test time with --device cuda --cuda-emulate
find_package(Threads REQUIRED)
add_executable(gpu_abi ${CMAKE_SOURCE_DIR}/tests/cuda/gpu_abi.c ${CMAKE_SOURCE_DIR}/tests/stress/so_model.c)
set_target_properties(gpu_abi PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/cuda)
target_include_directories(gpu_abi PRIVATE ${CMAKE_SOURCE_DIR}/tests/stress ${CMAKE_SOURCE_DIR}/tests/unit)
target_link_libraries(gpu_abi PRIVATE tsaot_so_load tsaot_rt ${CMAKE_DL_LIBS} Threads::Threads)
add_dependencies(gpu_abi tsaot fake_cuda fake_cublas)
add_test(NAME cuda.gpu_abi
         COMMAND ${CMAKE_COMMAND} -E env --unset=FAKE_CUDA_NO_DEVICE --unset=FAKE_CUBLAS_CREATE_FAIL
                 $<TARGET_FILE:gpu_abi> $<TARGET_FILE:tsaot> ${CMAKE_SOURCE_DIR}/tests/fixtures
                 ${CMAKE_BINARY_DIR}/tests/cuda $<TARGET_FILE:fake_cuda> $<TARGET_FILE:fake_cublas>)
set_tests_properties(cuda.gpu_abi PROPERTIES TIMEOUT 600)
