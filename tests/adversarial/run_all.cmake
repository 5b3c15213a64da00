# Every adversarial case (cases.cmake) against the built command, in one script: the Meson
# build's test `adversarial` (examples/meson.build). CMake builds register one CTest per case
# instead.
#   cmake -DCLI=path/to/perfcast [-DPERFCAST_ONNX_FOUND=ON] -P run_all.cmake
# Each case runs run_case.cmake as CTest would; every case runs, and the failures are listed
# with their output at the end (exit status non-zero when any failed).
if(NOT DEFINED CLI)
    message(FATAL_ERROR "run_all.cmake: -DCLI=path/to/perfcast is required")
endif()

function(perfcast_adversarial_case name exit expect reject)
    perfcast_adversarial_words(words ${ARGN})
    execute_process(COMMAND "${CMAKE_COMMAND}" "-DCLI=${CLI}" "-DARGS=${words}" "-DEXIT=${exit}"
                            "-DEXPECT=${expect}" "-DREJECT=${reject}"
                            -P "${PERFCAST_ADVERSARIAL_DIR}/run_case.cmake"
                    RESULT_VARIABLE status
                    OUTPUT_VARIABLE out
                    ERROR_VARIABLE out)
    set_property(GLOBAL APPEND PROPERTY perfcast_adversarial_ran "${name}")
    if(status EQUAL 0)
        message(STATUS "adversarial_${name}: passed")
    else()
        set_property(GLOBAL APPEND PROPERTY perfcast_adversarial_failed "${name}")
        message("adversarial_${name}: FAILED\n${out}")
    endif()
endfunction()

include("${CMAKE_CURRENT_LIST_DIR}/cases.cmake")

get_property(ran GLOBAL PROPERTY perfcast_adversarial_ran)
get_property(failed GLOBAL PROPERTY perfcast_adversarial_failed)
list(LENGTH ran n_ran)
if(n_ran EQUAL 0)
    message(FATAL_ERROR "run_all.cmake: cases.cmake ran no case")
endif()
if(failed)
    list(LENGTH failed n_failed)
    message(FATAL_ERROR "${n_failed} of ${n_ran} adversarial cases failed: ${failed}")
endif()
message(STATUS "all ${n_ran} adversarial cases passed")
