# Negative compile tests: code that must NOT compile (unit mix-ups and other type misuse).
#
# perfcast_add_compile_fail_tests(<dir>) registers, for each <dir>/*.cpp:
#   compile_fail.<name>          compiles the file with -DPERFCAST_COMPILE_FAIL=1 and passes only
#                                when the compiler rejects it (WILL_FAIL);
#   compile_fail.<name>.control  compiles it without the macro and passes only when it compiles.
# The control proves the file fails because of the guarded line, not because of a typo or a
# missing include. Each file therefore guards its one bad line:
#     #if PERFCAST_COMPILE_FAIL
#         <the line that must not compile>
#     #endif
# The compiler runs in syntax-only mode (templates and constant evaluation are still checked)
# with no warning flags, so that only a real error can make the negative test pass.
function(perfcast_add_compile_fail_tests dir)
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
        message(STATUS "perfcast: compile-fail tests need GCC or Clang; skipped")
        return()
    endif()
    file(GLOB sources CONFIGURE_DEPENDS "${dir}/*.cpp")
    list(SORT sources)
    set(compile
        "${CMAKE_CXX_COMPILER}" -std=c++20 -fsyntax-only "-I${PROJECT_SOURCE_DIR}/include")
    foreach(source IN LISTS sources)
        get_filename_component(name "${source}" NAME_WE)
        file(READ "${source}" text)
        if(NOT text MATCHES "PERFCAST_COMPILE_FAIL")
            message(WARNING "perfcast: ${source} has no '#if PERFCAST_COMPILE_FAIL' guard; "
                            "its negative test cannot tell a typo from the intended error")
        else()
            add_test(NAME compile_fail.${name}.control COMMAND ${compile} "${source}")
            set_tests_properties(compile_fail.${name}.control PROPERTIES LABELS compile_fail)
        endif()
        add_test(NAME compile_fail.${name}
                 COMMAND ${compile} -DPERFCAST_COMPILE_FAIL=1 "${source}")
        set_tests_properties(compile_fail.${name} PROPERTIES WILL_FAIL TRUE LABELS compile_fail)
    endforeach()
endfunction()
