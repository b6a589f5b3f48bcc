# tests/opinfo/opinfo.cmake: PyTorch's own operator and module samples
# (OpInfo's op_db, common_modules' module_db) through tsaot, against
# PyTorch's outputs (tests/fixtures/opinfo and tests/fixtures/moduleinfo,
# made by tests/fixtures/make_opinfo_cases.py; included by the top
# CMakeLists.txt). Each prints `ops N/M` (`modules N/M`), the failing ops
# grouped by reason and the most common reasons, and fails on a wrong
# value or a crash, or when a count falls below its line in
# tests/opinfo/floor.txt; an op tsaot does not support does not fail it
# (tests/opinfo/run_opinfo.py).
#
#   opinfo.interp        every (op, variant) model through tsaot-run
#   opinfo.compiled      every model compiled by tsaot for its samples, the
#                        library run by tsaot-run; linked against the runtime
#                        as one shared library (below) to fit the time
#   moduleinfo.interp    the ModuleInfo models through tsaot-run
#   moduleinfo.compiled  the same compiled
#
# In the sanitizer builds each runs every 10th op only (--every 10), and
# not against the floor.

# The runtime's static libraries linked whole into one shared library, for
# tests/opinfo/link_rt.sh (tsaot's TSAOT_CC in opinfo.compiled).
set(TSAOT_OPINFO_RT ${CMAKE_BINARY_DIR}/tests/opinfo/libtsaot_opinfo_rt.so)
set(_tsaot_opinfo_san)
if(TSAOT_SANITIZE)
  set(_tsaot_opinfo_san -fsanitize=address,undefined)
elseif(TSAOT_TSAN)
  set(_tsaot_opinfo_san -fsanitize=thread)
endif()
set(_tsaot_opinfo_dl ${CMAKE_DL_LIBS})
list(TRANSFORM _tsaot_opinfo_dl PREPEND -l)
add_custom_command(
  OUTPUT ${TSAOT_OPINFO_RT}
  COMMAND ${CMAKE_C_COMPILER} -shared -o ${TSAOT_OPINFO_RT} -Wl,-soname,libtsaot_opinfo_rt.so
          ${_tsaot_opinfo_san} -Wl,--whole-archive $<TARGET_FILE:tsaot_loader> $<TARGET_FILE:tsaot_fe>
          $<TARGET_FILE:tsaot_passes> $<TARGET_FILE:tsaot_rt> $<TARGET_FILE:tsaot_core> $<TARGET_FILE:tsaot_ir>
          -Wl,--no-whole-archive
          ${TSAOT_OPENBLAS_LIBRARY} ${TSAOT_LIBZIP_LINK_LIBRARIES} -lm -lpthread ${_tsaot_opinfo_dl}
  DEPENDS tsaot_loader tsaot_fe tsaot_passes tsaot_rt tsaot_core tsaot_ir
  COMMENT "Linking the runtime as one shared library for opinfo.compiled"
  VERBATIM)
add_custom_target(tsaot_opinfo_rt ALL DEPENDS ${TSAOT_OPINFO_RT})

set(_tsaot_opinfo_every)
if(TSAOT_SANITIZE OR TSAOT_TSAN)
  set(_tsaot_opinfo_every --every 10)
endif()
set(_tsaot_opinfo_run ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/tests/opinfo/run_opinfo.py
    --tsaot-run $<TARGET_FILE:tsaot-run> --tsaot-opt $<TARGET_FILE:tsaot-opt>
    --floor ${CMAKE_SOURCE_DIR}/tests/opinfo/floor.txt ${_tsaot_opinfo_every})
set(_tsaot_opinfo_compile --tsaot $<TARGET_FILE:tsaot> --rt ${TSAOT_OPINFO_RT}
    --link ${CMAKE_SOURCE_DIR}/tests/opinfo/link_rt.sh)
foreach(what opinfo moduleinfo)
  add_test(NAME ${what}.interp
           COMMAND ${_tsaot_opinfo_run} --mode interp --cases ${CMAKE_SOURCE_DIR}/tests/fixtures/${what}
                   --json ${CMAKE_BINARY_DIR}/tests/opinfo/${what}.interp.json)
  add_test(NAME ${what}.compiled
           COMMAND ${_tsaot_opinfo_run} --mode compiled --cases ${CMAKE_SOURCE_DIR}/tests/fixtures/${what}
                   ${_tsaot_opinfo_compile} --json ${CMAKE_BINARY_DIR}/tests/opinfo/${what}.compiled.json)
  # A hang guard, not a speed check: opinfo.compiled takes 20 minutes on the
  # shared 2-core machine at load 19 (5 minutes of CPU). Two cases run at once.
  set_tests_properties(${what}.interp ${what}.compiled PROPERTIES TIMEOUT 3000 PROCESSORS 2)
endforeach()
