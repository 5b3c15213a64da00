# Options that apply to perfcast's own targets only (tests, benchmarks, examples), never to the
# perfcast INTERFACE target: a consumer's warning flags are the consumer's business.

# perfcast_set_warnings(<target>): the project warning set, -Werror when PERFCAST_WERROR.
function(perfcast_set_warnings target)
    if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        target_compile_options(${target} PRIVATE
            -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow)
        if(PERFCAST_WERROR)
            target_compile_options(${target} PRIVATE -Werror)
        endif()
    elseif(MSVC)
        target_compile_options(${target} PRIVATE /W4 /permissive-)
        if(PERFCAST_WERROR)
            target_compile_options(${target} PRIVATE /WX)
        endif()
    endif()
endfunction()

# perfcast_set_sanitizers(<target>): -fsanitize=${PERFCAST_SANITIZE}, stopping at the first
# report so that a sanitizer finding fails the test instead of scrolling past.
function(perfcast_set_sanitizers target)
    if(PERFCAST_SANITIZE STREQUAL "")
        return()
    endif()
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        message(FATAL_ERROR "PERFCAST_SANITIZE needs GCC or Clang")
    endif()
    target_compile_options(${target} PRIVATE
        -fsanitize=${PERFCAST_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=${PERFCAST_SANITIZE})
endfunction()

# perfcast_target_defaults(<target>): what every perfcast-owned compiled target gets.
# Standard C++20 (-std=c++20, not gnu++20): the library must not lean on GNU extensions.
function(perfcast_target_defaults target)
    set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
    perfcast_set_warnings(${target})
    perfcast_set_sanitizers(${target})
endfunction()
