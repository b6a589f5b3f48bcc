# tests/fuzz/fuzz.cmake: the fuzz targets (see tests/fuzz/README.md),
# included by the top CMakeLists.txt.
#
# Every build makes tests/fuzz/fuzz_<target>_replay (the target linked with
# replay.c) and the test fuzz.replay.<target>, which runs it over
# tests/fuzz/corpus/<target>/ and tests/fuzz/regressions/<target>/.
# With TSAOT_FUZZ=ON and clang, the libraries are built with coverage
# instrumentation and ASan+UBSan, and fuzz/fuzz_<target> are libFuzzer
# programs (scripts/fuzz.sh drives them).
option(TSAOT_FUZZ "Build the libFuzzer targets (needs clang, e.g. CC=clang-16)" OFF)

set(TSAOT_FUZZ_TARGETS zip pickle script ir npy)
set(_tsaot_fuzz_dir ${CMAKE_SOURCE_DIR}/tests/fuzz)

if(TSAOT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "tsaot: TSAOT_FUZZ=ON needs clang (libFuzzer): configure with CC=clang-16")
  endif()
  set(_tsaot_fuzz_san -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  foreach(lib tsaot_ir tsaot_core tsaot_rt tsaot_passes tsaot_fe tsaot_loader)
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link ${_tsaot_fuzz_san})
    target_link_options(${lib} INTERFACE ${_tsaot_fuzz_san})
  endforeach()
endif()

# What the targets share: an in-memory zip writer.
add_library(tsaot_fuzz_util STATIC ${_tsaot_fuzz_dir}/zipmem.c)
target_include_directories(tsaot_fuzz_util PUBLIC ${_tsaot_fuzz_dir})

foreach(t IN LISTS TSAOT_FUZZ_TARGETS)
  set(src ${_tsaot_fuzz_dir}/fuzz_${t}.c)
  add_executable(fuzz_${t}_replay ${_tsaot_fuzz_dir}/replay.c ${src})
  set_target_properties(fuzz_${t}_replay PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/fuzz)
  target_link_libraries(fuzz_${t}_replay PRIVATE tsaot_fuzz_util tsaot_loader tsaot_fe tsaot_passes tsaot_rt tsaot_core tsaot_ir)
  add_test(NAME fuzz.replay.${t}
           COMMAND fuzz_${t}_replay ${_tsaot_fuzz_dir}/corpus/${t} ${_tsaot_fuzz_dir}/regressions/${t})
  if(TSAOT_FUZZ)
    add_executable(fuzz_${t} ${src})
    set_target_properties(fuzz_${t} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz)
    target_compile_options(fuzz_${t} PRIVATE -fsanitize=fuzzer ${_tsaot_fuzz_san})
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${t} PRIVATE tsaot_fuzz_util tsaot_loader tsaot_fe tsaot_passes tsaot_rt tsaot_core tsaot_ir)
  endif()
endforeach()
if(TSAOT_FUZZ)
  target_compile_options(tsaot_fuzz_util PRIVATE ${_tsaot_fuzz_san})
  list(TRANSFORM TSAOT_FUZZ_TARGETS PREPEND fuzz_ OUTPUT_VARIABLE _tsaot_fuzz_bins)
  add_custom_target(fuzz DEPENDS ${_tsaot_fuzz_bins})
endif()
