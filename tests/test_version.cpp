// perfcast/version.hpp and `perfcast --version`: the header says the build's project() version
// (CMakeLists.txt or meson.build, passed in as PERFCAST_PROJECT_VERSION), and the command prints it.
#include <doctest/doctest.h>

#include <perfcast/version.hpp>

#include <sstream>
#include <string>
#include <string_view>

#include "../examples/perfcast/cli.hpp"
#include "../examples/perfcast/commands.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_version {

#ifndef PERFCAST_PROJECT_VERSION
#error "the build passes the project() version as PERFCAST_PROJECT_VERSION"
#endif

namespace {

struct run_result {
    int status;
    std::string out;
    std::string err;
};

// The whole command line: `perfcast <arg>`, with the real dispatch and one command in the table.
run_result run_top(std::string_view arg) {
    std::ostringstream out, err;
    const std::string_view args[] = {arg};
    const perfcast::cli::command table[] = {perfcast::cli::chips_command};
    const int status = perfcast::cli::dispatch(args, table, out, err);
    return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("version.hpp agrees with the build's project() version") {
    CHECK(perfcast::version == std::string_view{PERFCAST_PROJECT_VERSION});
    const std::string from_macros = std::to_string(PERFCAST_VERSION_MAJOR) + "." +
                                    std::to_string(PERFCAST_VERSION_MINOR) + "." +
                                    std::to_string(PERFCAST_VERSION_PATCH);
    CHECK(from_macros == PERFCAST_PROJECT_VERSION);
}

TEST_CASE("perfcast --version prints the version and exits 0") {
    const run_result r = run_top("--version");
    CHECK(r.status == 0);
    CHECK(r.out == std::string("perfcast ") + PERFCAST_PROJECT_VERSION + "\n");
    CHECK(r.err.empty());
}

TEST_CASE("perfcast --help names --version") {
    const run_result r = run_top("--help");
    CHECK(r.status == 0);
    CHECK(r.out.find("'perfcast --version'") != std::string::npos);
}

}  // namespace test_version
