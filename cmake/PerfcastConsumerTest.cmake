# cmake -P script behind the `consumer` ctest test: a user project builds and runs against
#   1. the installed package:   cmake --install into <build>/consumer-prefix, find_package(perfcast)
#   2. the source tree:         add_subdirectory(<perfcast source>)
#   3. pkg-config:              c++ $(pkg-config --cflags perfcast) main.cpp (when pkg-config exists)
# Inputs: PERFCAST_SOURCE_DIR, PERFCAST_BINARY_DIR, PERFCAST_CONFIG, PERFCAST_GENERATOR,
#         PERFCAST_CXX_COMPILER.
cmake_minimum_required(VERSION 3.25)

foreach(var PERFCAST_SOURCE_DIR PERFCAST_BINARY_DIR PERFCAST_GENERATOR PERFCAST_CXX_COMPILER)
    if(NOT DEFINED ${var})
        message(FATAL_ERROR "PerfcastConsumerTest.cmake: -D${var}=... is required")
    endif()
endforeach()
if(NOT PERFCAST_CONFIG)
    set(PERFCAST_CONFIG Debug)
endif()

set(prefix "${PERFCAST_BINARY_DIR}/consumer-prefix")
set(work "${PERFCAST_BINARY_DIR}/consumer")
set(consumer_src "${PERFCAST_SOURCE_DIR}/tests/consumer")

function(run)
    list(JOIN ARGN " " shown)
    message(STATUS "consumer: ${shown}")
    execute_process(COMMAND ${ARGN} COMMAND_ERROR_IS_FATAL ANY)
endfunction()

# A fresh prefix each time, so that a header deleted from the tree is gone from the package.
file(REMOVE_RECURSE "${prefix}")
run("${CMAKE_COMMAND}" --install "${PERFCAST_BINARY_DIR}" --prefix "${prefix}"
    --config "${PERFCAST_CONFIG}")

foreach(mode package subdirectory)
    run("${CMAKE_COMMAND}" -S "${consumer_src}" -B "${work}/${mode}"
        -G "${PERFCAST_GENERATOR}"
        "-DCMAKE_CXX_COMPILER=${PERFCAST_CXX_COMPILER}"
        -DCMAKE_BUILD_TYPE=Debug
        "-DPERFCAST_CONSUMER_MODE=${mode}"
        "-DPERFCAST_CONSUMER_EXPECTED_PREFIX=${prefix}"
        "-DCMAKE_PREFIX_PATH=${prefix}"
        "-DPERFCAST_SOURCE_DIR=${PERFCAST_SOURCE_DIR}")
    run("${CMAKE_COMMAND}" --build "${work}/${mode}" --config Debug)
    run("${work}/${mode}/perfcast_consumer")
endforeach()

find_program(PKG_CONFIG_EXECUTABLE pkg-config)
if(PKG_CONFIG_EXECUTABLE)
    set(ENV{PKG_CONFIG_PATH} "${prefix}/share/pkgconfig")
    execute_process(COMMAND "${PKG_CONFIG_EXECUTABLE}" --cflags perfcast
                    OUTPUT_VARIABLE cflags OUTPUT_STRIP_TRAILING_WHITESPACE
                    COMMAND_ERROR_IS_FATAL ANY)
    separate_arguments(cflags UNIX_COMMAND "${cflags}")
    if(NOT cflags MATCHES "consumer-prefix/")
        message(FATAL_ERROR "consumer: perfcast.pc points at '${cflags}', not at ${prefix}")
    endif()
    file(MAKE_DIRECTORY "${work}/pkg-config")
    run("${PERFCAST_CXX_COMPILER}" -std=c++20 ${cflags} "${consumer_src}/main.cpp"
        -o "${work}/pkg-config/perfcast_consumer")
    run("${work}/pkg-config/perfcast_consumer")
else()
    message(STATUS "consumer: pkg-config not found; .pc check skipped")
endif()
