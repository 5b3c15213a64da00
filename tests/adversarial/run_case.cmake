# One adversarial case (tests/adversarial/cases.cmake) against the built command:
#   cmake -DCLI=path/to/perfcast -DARGS="whatif|--model|FILE" -DEXIT=1 -DEXPECT="too large"
#         [-DREJECT=regex] -P run_case.cmake
# ARGS: the command line, words separated by '|'. Passes when the exit status is EXIT, the
# output (stdout and stderr together) contains EXPECT, and, with REJECT, nothing in it matches
# REJECT. A crash, a sanitizer report (non-zero exit from ASan/UBSan) or a hang (CTest's
# timeout) fails.
foreach(var CLI ARGS EXIT EXPECT)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "run_case.cmake: -D${var}=... is required")
    endif()
endforeach()
string(REPLACE "|" ";" words "${ARGS}")
execute_process(COMMAND "${CLI}" ${words}
                RESULT_VARIABLE status
                OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT status STREQUAL EXIT)
    message(FATAL_ERROR "perfcast ${words}: exit status ${status}, expected ${EXIT}\n${out}")
endif()
string(FIND "${out}" "${EXPECT}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "perfcast ${words}: output lacks '${EXPECT}'\n${out}")
endif()
if(DEFINED REJECT AND NOT REJECT STREQUAL "")
    if(out MATCHES "${REJECT}")
        message(FATAL_ERROR "perfcast ${words}: output matches '${REJECT}' "
                            "('${CMAKE_MATCH_0}')\n${out}")
    endif()
endif()
message(STATUS "perfcast ${words}: exit ${status}, '${EXPECT}' found")
