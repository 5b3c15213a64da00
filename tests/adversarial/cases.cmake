# The adversarial corpus against the built command (tests/adversarial/README.md): one CTest per
# case, label `adversarial`, registered with the command (examples/CMakeLists.txt) so that every
# configuration that builds the command runs it: dev, clang, the ASan + UBSan build and Release
# (where the unit tests, and with them tests/test_edges.cpp, are not built). The Meson build runs
# them all as one test, `adversarial` (run_all.cmake).
#
# perfcast_adversarial_case(NAME EXIT EXPECT REJECT WORDS...): `perfcast WORDS...` must exit
# with EXIT and print EXPECT (stdout and stderr together); REJECT, when not empty, is a regex
# nothing in the output may match. @A@ in a word stands for this folder.
set(PERFCAST_ADVERSARIAL_DIR "${CMAKE_CURRENT_LIST_DIR}")
# "inf" or "nan" as a word, any case: a non-finite number printed.
set(PERFCAST_NOT_FINITE "(^|[^A-Za-z_])([Ii][Nn][Ff]|[Nn][Aa][Nn])([^A-Za-z_]|$)")

# The words of a case as run_case.cmake's ARGS: @A@ replaced, joined by '|'.
function(perfcast_adversarial_words out)
    set(words "${ARGN}")
    string(REPLACE "@A@" "${PERFCAST_ADVERSARIAL_DIR}" words "${words}")
    string(REPLACE ";" "|" words "${words}")
    set(${out} "${words}" PARENT_SCOPE)
endfunction()

# One CTest per case. run_all.cmake (the Meson build's runner) defines its own first: it runs the
# case at once.
if(NOT COMMAND perfcast_adversarial_case)
    function(perfcast_adversarial_case name exit expect reject)
        perfcast_adversarial_words(words ${ARGN})
        add_test(NAME adversarial_${name}
                 COMMAND "${CMAKE_COMMAND}" "-DCLI=$<TARGET_FILE:perfcast_cli>" "-DARGS=${words}"
                         "-DEXIT=${exit}" "-DEXPECT=${expect}" "-DREJECT=${reject}"
                         -P "${PERFCAST_ADVERSARIAL_DIR}/run_case.cmake")
        set_tests_properties(adversarial_${name} PROPERTIES LABELS adversarial TIMEOUT 300)
    endfunction()
endif()

set(_one_config --streams 1 --cube 24 --vector 48 --batch 16)

# Model files.
perfcast_adversarial_case(bom_crlf_model 0 "model bom_crlf (2 nodes)" ""
                          whatif --model @A@/bom_crlf.model ${_one_config})
perfcast_adversarial_case(cr_only_model 0 "model cr_only (2 nodes)" ""
                          whatif --model @A@/cr_only.model ${_one_config})
perfcast_adversarial_case(overflow_elementwise_model 1
                          "perfcast::elementwise: bytes (elements x dtype size)" ""
                          whatif --model @A@/overflow_elementwise.model --batch 8)
perfcast_adversarial_case(binary_op_model 1 "bad\\x00op\\x01\\xFF" ""
                          whatif --model @A@/binary_op.model)
perfcast_adversarial_case(huge_host_us_model 1 "expected a host time in [0, 1e9) us" ""
                          whatif --model @A@/huge_host_us.model)
# Params files.
perfcast_adversarial_case(bom_cr_params 0 "latency_us" ""
                          op --params @A@/bom_cr.params --elementwise 1000)
perfcast_adversarial_case(huge_launch_params 1 "expected a time in [0, 1e9) us, got 1e300" ""
                          op --params @A@/huge_launch.params --elementwise 1000)
# A chip ini and profiles.
perfcast_adversarial_case(slow_memory_ini 1
                          "memory.core_read_rate = 1e-300, expected a rate in [0.001, 1e6]" ""
                          op --chip-ini @A@/slow_memory.ini --elementwise 1000)
perfcast_adversarial_case(tiny_duration_report 0 "Top 2 ops by duration" "${PERFCAST_NOT_FINITE}"
                          report @A@/tiny_duration.csv --chip 910B1)
perfcast_adversarial_case(tiny_duration_report_csv 0 "top_op" "${PERFCAST_NOT_FINITE}"
                          report @A@/tiny_duration.csv --chip 910B1 --format csv)
perfcast_adversarial_case(long_duration_report 1
                          "long_duration.csv:2:16: a time over a day (86400000000 us)" ""
                          report @A@/long_duration.csv --chip 910B1)
# Flags: loads, sizes and grids past what the simulation or the tables can hold.
set(_one_serving --streams 1 --cube 24 --vector 48 --max-batch 16 --requests 1000)
perfcast_adversarial_case(saturated_qps_csv 0 ",saturated" "${PERFCAST_NOT_FINITE}"
                          whatif --qps 1e9 ${_one_serving} --format csv)
perfcast_adversarial_case(window_1e299 2
                          "'1e299' is not a batching window in [0, 60000] ms" ""
                          whatif --qps 100 --window-ms 1e299 ${_one_serving})
perfcast_adversarial_case(huge_requests 2 "more than the 1e8 one simulation may queue" ""
                          whatif --qps 1 --batch 1048576 --max-batch 32)
perfcast_adversarial_case(huge_grid 1 "expected at most 1e7 deployments in one sweep" ""
                          whatif --batch 1-100000 --streams 1-7)
# ONNX graphs (docs/import.md): bytes that are not ONNX, a truncated file, a second dynamic
# dimension; a build without ONNX names the package instead.
set(_onnx "${CMAKE_CURRENT_LIST_DIR}/../data/onnx")
if(PERFCAST_ONNX_FOUND)
    perfcast_adversarial_case(onnx_not_onnx 1 "not_onnx.onnx: contents" ""
                              import ${_onnx}/not_onnx.onnx)
    perfcast_adversarial_case(onnx_truncated 1 "truncated.onnx: contents" ""
                              whatif --model ${_onnx}/truncated.onnx ${_one_config})
    perfcast_adversarial_case(onnx_dynamic_seq 1 "graph input 'x' dimension 1" ""
                              import ${_onnx}/bad_dynamic_seq.onnx)
    perfcast_adversarial_case(onnx_whatif 0 "model dlrm_kaggle (106 nodes)" "${PERFCAST_NOT_FINITE}"
                              whatif --model ${_onnx}/dlrm.onnx ${_one_config})
else()
    perfcast_adversarial_case(onnx_missing 1 "libonnx-dev" "" import ${_onnx}/dlrm.onnx)
endif()
