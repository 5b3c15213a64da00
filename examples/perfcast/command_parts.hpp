// examples/perfcast/command_parts.hpp: parts of a subcommand that have their own file and that
// another subcommand's file calls: `perfcast whatif --gains` (cmd_gains.cpp, called by
// cmd_whatif.cpp) and the --deployments forms of `perfcast validate` and `perfcast calibrate`
// (cmd_deployments.cpp, called by cmd_validate.cpp). Like every cmd_*.cpp they are compiled once
// into the perfcast_commands library; the subcommands themselves are declared in commands.hpp.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include <perfcast/chip.hpp>
#include <perfcast/deployment.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/profile/ops.hpp>

#include "cli.hpp"

namespace perfcast::cli {

namespace whatif_gains {

inline constexpr option gains_option{
    "gains", "",
    "what each runtime option, instance count and core limit buys for ONE deployment "
    "(one --batch, --streams, --cube, --vector), ranked (docs/runtime.md)"};

/// `perfcast whatif --gains`: `m` and `c` as whatif read them; the flags name one deployment.
int run(const parsed_args& a, std::ostream& out, const model& m, const chip& c,
        const profile::calibration& cal, const std::string& format);

}  // namespace whatif_gains

/// Whether the arguments ask for the deployments form (--deployments given).
[[nodiscard]] bool wants_deployments(std::span<const std::string_view> args);

/// `perfcast validate --deployments ROWS.csv ...` and `perfcast calibrate --deployments ...`.
int run_validate_deployments(std::span<const std::string_view> args, std::ostream& out,
                             std::ostream& err);
int run_calibrate_deployments(std::span<const std::string_view> args, std::ostream& out,
                              std::ostream& err);

}  // namespace perfcast::cli
