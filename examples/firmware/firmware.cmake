# examples/firmware/firmware.cmake: the firmware-like example (main.c), built
# and run by the tests. Included by the top CMakeLists.txt after the tsaot
# target exists, with
#   TSAOT_TINY_MODEL  the model.pt of a fixture whose folder holds in0.npy and
#                     PyTorch's out0.npy (one float32 tensor in, one out);
#                     default tests/fixtures/tiny_cnn/model.pt
#   TSAOT_TINY_INPUT  its input spec (default f32[1,3,8,8], tiny_cnn's)
#
#   firmware.run  `tsaot MODEL -c -o model.o --name tiny --no-fallback`, the
#                 object linked statically with the runtime into `firmware`
#                 (malloc, calloc, realloc and free wrapped: main.c counts
#                 their calls during the runs), run 5 times on in0.npy
#                 against out0.npy; fails on a mismatch or on any allocator
#                 call during a run.

if(NOT DEFINED TSAOT_TINY_MODEL)
  set(TSAOT_TINY_MODEL ${CMAKE_SOURCE_DIR}/tests/fixtures/tiny_cnn/model.pt)
endif()
if(NOT DEFINED TSAOT_TINY_INPUT)
  set(TSAOT_TINY_INPUT "f32[1,3,8,8]")
endif()
get_filename_component(_tsaot_fw_case ${TSAOT_TINY_MODEL} DIRECTORY)
set(_tsaot_fw_dir ${CMAKE_BINARY_DIR}/examples/firmware)

add_custom_command(
  OUTPUT ${_tsaot_fw_dir}/model.o ${_tsaot_fw_dir}/model.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_tsaot_fw_dir}
  COMMAND $<TARGET_FILE:tsaot> ${TSAOT_TINY_MODEL} -c -o ${_tsaot_fw_dir}/model.o --name tiny
          --input ${TSAOT_TINY_INPUT} --no-fallback
  DEPENDS tsaot ${TSAOT_TINY_MODEL}
  COMMENT "tsaot: the firmware example's model (model.o, model.h)"
  VERBATIM)
set_source_files_properties(${_tsaot_fw_dir}/model.o PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
set_source_files_properties(${CMAKE_SOURCE_DIR}/examples/firmware/main.c PROPERTIES
                            OBJECT_DEPENDS ${_tsaot_fw_dir}/model.h)

add_executable(firmware ${CMAKE_SOURCE_DIR}/examples/firmware/main.c ${_tsaot_fw_dir}/model.o)
set_target_properties(firmware PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${_tsaot_fw_dir})
target_include_directories(firmware PRIVATE ${_tsaot_fw_dir} ${CMAKE_SOURCE_DIR}/include)
# The runtime's hosted part and its core (a --no-fallback object names no
# loader, frontend or pass), their system libraries; the allocator's entry
# points wrapped for main.c's counters.
target_link_libraries(firmware PRIVATE tsaot_rt tsaot_core tsaot_ir
  tsaot::dlpack tsaot::openblas Threads::Threads ${TSAOT_LIBM})
target_link_options(firmware PRIVATE "LINKER:--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free")

add_test(NAME firmware.run
         COMMAND firmware ${_tsaot_fw_case}/in0.npy ${_tsaot_fw_case}/out0.npy 5)
