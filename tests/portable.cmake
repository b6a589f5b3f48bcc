# tests/portable.cmake: tsaot's default target on other x86-64 CPUs
# (included by the top CMakeLists.txt after tests/codegen.cmake, which
# defines the firmware example).
#
#   portable.nehalem  tests/fixtures/portable_mlp compiled without --cpu, run
#                     under qemu-x86_64 -cpu Nehalem (x86-64-v2, no AVX) and
#                     -cpu Haswell (v3) against PyTorch's outputs, the copy of
#                     the fused kernels each ran named by tsaot-bench
#                     --profile (v2, v3, and this machine's own level), and
#                     the firmware example under -cpu Nehalem
#                     (tests/portable.sh); skipped without qemu-x86_64
#                     (Debian's qemu-user), on a machine that is not x86-64
#                     and in sanitizer builds

set(TSAOT_QEMU_X86_64 qemu-x86_64 CACHE STRING "qemu-user's x86-64 emulator, for portable.nehalem")
if(TSAOT_SANITIZE OR TSAOT_TSAN)
  # a sanitized tsaot-run under qemu-user spends minutes mapping its shadow
  # memory before main (tsaot-run --help had not finished after a minute)
  add_test(NAME portable.nehalem
           COMMAND sh -c "echo 'portable.nehalem: sanitized programs do not run under qemu-user in reasonable time; skipped'; exit 77")
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(_tsaot_fw_args)
  if(TARGET firmware)
    set(_tsaot_fw_args $<TARGET_FILE:firmware> ${CMAKE_SOURCE_DIR}/tests/fixtures/tiny_cnn)
  endif()
  add_test(NAME portable.nehalem
           COMMAND sh ${CMAKE_SOURCE_DIR}/tests/portable.sh ${TSAOT_QEMU_X86_64} $<TARGET_FILE:tsaot>
                   $<TARGET_FILE:tsaot-run> $<TARGET_FILE:tsaot-bench> ${TSAOT_PYTHON}
                   ${CMAKE_SOURCE_DIR}/tests/npy_close.py ${CMAKE_SOURCE_DIR}/tests/fixtures/portable_mlp
                   ${_tsaot_fw_args})
else()
  add_test(NAME portable.nehalem
           COMMAND sh -c "echo 'portable.nehalem: not an x86-64 machine (${CMAKE_SYSTEM_PROCESSOR}); skipped'; exit 77")
endif()
set_tests_properties(portable.nehalem PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
