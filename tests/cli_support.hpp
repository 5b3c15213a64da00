// tests/cli_support.hpp: run one perfcast command in-process, as the command line would.
#pragma once

#include <cstddef>
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

/// `base`, flag-value pairs, without the flags `more` sets, then `more`: the command takes a flag
/// once, so a test that varies one flag of a common set replaces it.
inline std::vector<std::string_view> with_flags(const std::vector<std::string_view>& base,
                                                const std::vector<std::string_view>& more) {
    std::vector<std::string_view> a;
    for (std::size_t i = 0; i + 1 < base.size(); i += 2) {
        bool replaced = false;
        for (const std::string_view m : more) replaced = replaced || m == base[i];
        if (!replaced) a.insert(a.end(), {base[i], base[i + 1]});
    }
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

}  // namespace perfcast_test
