# tests/layering/layering.cmake: the layers (top CMakeLists.txt, "targets")
# stay layered (tests/layering/README.md).
#
#   layering.includes   check_layers.py over the sources: every quoted
#                       #include of ir/, runtime/ (core), runtime/hosted/,
#                       passes/, frontend/, loader/, codegen/ against the
#                       layer table, a message naming file, line and rule
#   layering.symbols    nm of libtsaot_ir/core/rt/passes/fe.a: no symbol of a
#                       layer above defined or used (libtsaot_core.a: no
#                       ts_fe_, ts_pass_, ts_cg_, nor the hosted part's)
#   layering.tls       the thread-local segment of tsaot-run and of
#                       examples/firmware's program at most 4 KiB (readelf):
#                       each thread of a program that links the runtime
#                       pays it
#   layering.upward.LAYER.HEADER
#                       tests/layering/probe.c including HEADER, built with
#                       LAYER's include directories (an object library
#                       outside ALL): passes only when the compiler says
#                       the header is not found

add_test(NAME layering.includes
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/layering/check_layers.py includes ${CMAKE_SOURCE_DIR})
add_test(NAME layering.symbols
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/layering/check_layers.py symbols
                 ir=$<TARGET_FILE:tsaot_ir> core=$<TARGET_FILE:tsaot_core> rt=$<TARGET_FILE:tsaot_rt>
                 passes=$<TARGET_FILE:tsaot_passes> fe=$<TARGET_FILE:tsaot_fe>)

add_test(NAME layering.tls
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/layering/check_layers.py tls 4096
                 $<TARGET_FILE:tsaot-run> $<TARGET_FILE:firmware>)

# LAYER:HEADER, HEADER the API header of a layer above LAYER
set(_tsaot_probes
  ir:runtime.h ir:aot.h ir:passes.h
  core:aot.h core:npy.h core:passes.h core:frontend.h core:loader.h core:codegen.h
  rt:passes.h rt:frontend.h rt:loader.h rt:codegen.h
  passes:frontend.h passes:loader.h passes:codegen.h
  fe:loader.h fe:codegen.h)
foreach(pair IN LISTS _tsaot_probes)
  string(REPLACE ":" ";" _p ${pair})
  list(GET _p 0 layer)
  list(GET _p 1 header)
  string(MAKE_C_IDENTIFIER "${layer}_${header}" _id)
  add_library(tsaot_probe_${_id} OBJECT EXCLUDE_FROM_ALL ${CMAKE_SOURCE_DIR}/tests/layering/probe.c)
  target_link_libraries(tsaot_probe_${_id} PRIVATE tsaot_${layer})
  target_compile_definitions(tsaot_probe_${_id} PRIVATE TSAOT_PROBE_HEADER="${header}")
  add_test(NAME layering.upward.${layer}.${header}
           COMMAND ${CMAKE_COMMAND} --build ${CMAKE_BINARY_DIR} --target tsaot_probe_${_id})
  string(REPLACE "." "\\." _re ${header})
  # gcc: "frontend.h: No such file or directory"; clang: "'frontend.h' file not found"
  set_tests_properties(layering.upward.${layer}.${header} PROPERTIES
                       PASS_REGULAR_EXPRESSION "${_re}: No such file|'${_re}' file not found")
endforeach()
