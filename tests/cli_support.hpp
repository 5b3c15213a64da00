// tests/cli_support.hpp: run one perfcast command in-process, as the command line would.
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/cli.hpp"

namespace perfcast_test {

/// Exit status and the two streams of one run.
struct cli_run {
    int status;
    std::string out;
    std::string err;
};

/// `perfcast <c.name> args...`, with `c` the only command in the table.
inline cli_run run_command(const perfcast::cli::command& c, std::vector<std::string_view> args) {
    args.insert(args.begin(), c.name);
    std::ostringstream out, err;
    const perfcast::cli::command table[] = {c};
    const int status = perfcast::cli::dispatch(args, table, out, err);
    return {status, out.str(), err.str()};
}

}  // namespace perfcast_test
