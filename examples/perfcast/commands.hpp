// examples/perfcast/commands.hpp: the `perfcast` subcommands, declared. Each is defined in its own
// examples/perfcast/cmd_<name>.cpp, compiled once into the perfcast_commands library that the
// command (main.cpp) and the tests link: including this header costs a test file nothing of the
// commands' code.
//
// To add `perfcast <name>`: declare run_<name> and <name>_usage here and add its
// `inline constexpr command <name>_command`, define both in cmd_<name>.cpp (flags through
// parse_args, see cmd_chips.cpp), and add one line to main.cpp's table (docs/contributing.md).
// A part of a subcommand in a file of its own that another cmd_*.cpp calls (`whatif --gains`,
// the --deployments forms of validate and calibrate) is declared in command_parts.hpp.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include <perfcast/node.hpp>
#include <perfcast/op_vocabulary.hpp>

#include "cli.hpp"

namespace perfcast::cli {

// Each run_<name> parses its flags, runs, prints and returns an exit status (cli.hpp); it may throw
// usage_error (status 2) or perfcast::error (status 1), which dispatch() turns into messages.

int run_chips(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
[[nodiscard]] std::string chips_usage();
inline constexpr command chips_command{"chips", "list chip presets and their parameters", run_chips,
                                       chips_usage};

int run_whatif(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
[[nodiscard]] std::string whatif_usage();
inline constexpr command whatif_command{
    "whatif", "rank deployments (streams x core split x batch) by QPS under a latency target",
    run_whatif, whatif_usage};

/// `perfcast op` with the op kinds of `ops` (op_kinds, or an extension's vocabulary).
int run_op_in(op_vocabulary ops, std::span<const std::string_view> args, std::ostream& out,
              std::ostream& err);
[[nodiscard]] std::string op_usage();

template <const auto& Ops>
int run_op_with(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    return run_op_in(Ops, args, out, err);
}

/// `perfcast op` over the op kinds of `Ops`, a namespace-scope vocabulary (node.hpp's with_rows).
template <const auto& Ops>
inline constexpr command op_command_with{"op", "predict the cost of one op under a core limit",
                                         run_op_with<Ops>, op_usage};

inline constexpr command op_command = op_command_with<op_kinds>;

int run_validate(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
[[nodiscard]] std::string validate_usage();
inline constexpr command validate_command{
    "validate", "score the model against measured rows (MAPE, P90, by type)", run_validate,
    validate_usage};

int run_calibrate(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
[[nodiscard]] std::string calibrate_usage();
inline constexpr command calibrate_command{"calibrate", "fit the model's parameters to a profile",
                                           run_calibrate, calibrate_usage};

int run_report(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
[[nodiscard]] std::string report_usage();
inline constexpr command report_command{
    "report",
    "utilization, bounds and findings of a measured profile (op_summary / kernel_details)",
    run_report, report_usage};

int run_import(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);
[[nodiscard]] std::string import_usage();
inline constexpr command import_command{"import", "an ONNX graph as a model file", run_import,
                                        import_usage};

}  // namespace perfcast::cli
