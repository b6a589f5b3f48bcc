# tests/stress/stress.cmake: compiled models through their C ABI, from
# programs that compile a fixture with the build's tsaot and dlopen it
# (included by the top CMakeLists.txt).
#
#   stress.threads       one model run from 4 threads at once, run and
#                        run_static, every output checked bit for bit
#                        (also the test the TSAOT_TSAN build runs)
#   abi.caller_tensors   every entry point refuses bad caller tensors and
#                        pointers with TSAOT_E_INPUT/E_OUTPUT/E_ARENA and a reason

find_package(Threads REQUIRED)
foreach(prog stress_threads abi_checks)
  add_executable(${prog} ${CMAKE_SOURCE_DIR}/tests/stress/${prog}.c ${CMAKE_SOURCE_DIR}/tests/stress/so_model.c)
  set_target_properties(${prog} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/stress)
  target_include_directories(${prog} PRIVATE ${CMAKE_SOURCE_DIR}/tests/stress ${CMAKE_SOURCE_DIR}/tests/unit)
  target_link_libraries(${prog} PRIVATE tsaot_so_load tsaot_rt ${CMAKE_DL_LIBS} Threads::Threads)
  add_dependencies(${prog} tsaot)
endforeach()

add_test(NAME stress.threads
         COMMAND stress_threads $<TARGET_FILE:tsaot> ${CMAKE_SOURCE_DIR}/tests/fixtures
                 ${CMAKE_BINARY_DIR}/tests/stress 300 2)
add_test(NAME abi.caller_tensors
         COMMAND abi_checks $<TARGET_FILE:tsaot> ${CMAKE_SOURCE_DIR}/tests/fixtures ${CMAKE_BINARY_DIR}/tests/stress)
set_tests_properties(stress.threads abi.caller_tensors PROPERTIES TIMEOUT 300)
