# tests/bench.cmake: the benchmark tools' tests (bench/, README "Benchmarks").
# Included by the top CMakeLists.txt. Neither asserts anything about speed.
#
#   bench.json   tsaot-bench --json on small_mlp (3 runs): one JSON object with
#                every field of its contract and sane values
#                (bench/check_bench_json.py)
#   bench.trace.loops, bench.trace.small_mlp
#                tsaot-bench --trace: the Chrome trace loads with Python's
#                json, its events are well-formed, one per node run (as many
#                as --profile counts), named by the model's ops
#                (bench/check_trace.py)
#   bench.table  bench/bench.py's table writer on a canned result
#                (bench/test_table.py, bench/testdata/canned.json); needs
#                neither libtorch nor gnuplot

set(TSAOT_BENCH_FIXTURE ${CMAKE_SOURCE_DIR}/tests/fixtures/small_mlp)
add_test(NAME bench.json
         COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/bench/check_bench_json.py $<TARGET_FILE:tsaot-bench>
                 ${TSAOT_BENCH_FIXTURE}/model.pt ${TSAOT_BENCH_FIXTURE}/in0.npy --json --iters 3 --warmup 1)
set_tests_properties(bench.json PROPERTIES TIMEOUT 600)

foreach(_fx loops small_mlp)
  file(GLOB _ins ${CMAKE_SOURCE_DIR}/tests/fixtures/${_fx}/in*.npy)
  list(SORT _ins)
  add_test(NAME bench.trace.${_fx}
           COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/bench/check_trace.py $<TARGET_FILE:tsaot-bench>
                   $<TARGET_FILE:tsaot-dump> ${CMAKE_CURRENT_BINARY_DIR}/bench_trace_${_fx}.json
                   ${CMAKE_SOURCE_DIR}/tests/fixtures/${_fx}/model.pt ${_ins})
  set_tests_properties(bench.trace.${_fx} PROPERTIES TIMEOUT 600)
endforeach()

add_test(NAME bench.table COMMAND ${TSAOT_PYTHON} ${CMAKE_SOURCE_DIR}/bench/test_table.py)
