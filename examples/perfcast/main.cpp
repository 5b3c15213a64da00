// examples/perfcast/main.cpp: the `perfcast` command.
//
//   perfcast chips      presets and their parameters
//   perfcast whatif     ranked deployments (built-in scenario, a model file or a profile),
//                       and serving under load (--qps, --p99-ms, --traffic)
//   perfcast op         the cost of one op under a core limit
//   perfcast calibrate  fit the model's parameters to a profile
//   perfcast validate   score the model against measured rows
//   perfcast report     utilization, bounds and findings of a profile
//   perfcast import     an ONNX graph as a model file (needs ONNX at build time)
//   perfcast --help     this list; `perfcast <command> --help` for a command's options
//   perfcast --version  the version (include/perfcast/version.hpp)
//
// Exit status: 0 success, 1 the command failed (message on stderr), 2 wrong command line (usage on
// stderr). Standard output is checked at the end: a write that failed (`perfcast chips >
// /dev/full`, a closed pipe) is a failure with the OS reason, not a silent exit 0. Long runs
// show progress on stderr when it is a terminal (progress.hpp), never on stdout.
#include <cstdio>
#include <iostream>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"  // every subcommand, each defined in its cmd_<name>.cpp

#include "progress.hpp"  // progress_settings.terminal

#if __has_include(<unistd.h>)
#include <unistd.h>  // isatty: progress lines only on a terminal unless --progress
#define PERFCAST_HAS_ISATTY 1
#endif

namespace {

// ---------------------------------------------------------------------------------------------
// THE DISPATCH TABLE. To add `perfcast <name>`:
//   1. write examples/perfcast/cmd_<name>.cpp defining, in namespace perfcast::cli,
//        int run_<name>(std::span<const std::string_view> args, std::ostream& out,
//                       std::ostream& err);        // may throw usage_error / perfcast::error
//        std::string <name>_usage();
//      (parse flags with parse_args(args, options); see cmd_chips.cpp; print through a
//      library writer, include/perfcast/io/<result>_report.hpp, with defaults from library
//      constants: docs/contributing.md, "A command");
//   2. declare both in commands.hpp with
//        inline constexpr command <name>_command{"<name>", "one-line summary",
//                                                run_<name>, <name>_usage};
//   3. add ONE line below. Order here is the order in `perfcast --help`.
// ---------------------------------------------------------------------------------------------
// One command a line, in --help order.
// clang-format off
constexpr perfcast::cli::command commands[] = {
    perfcast::cli::chips_command,
    perfcast::cli::whatif_command,
    perfcast::cli::op_command,
    perfcast::cli::calibrate_command,
    perfcast::cli::validate_command,
    perfcast::cli::report_command,
    perfcast::cli::import_command,  // docs/import.md
};
// clang-format on

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
#ifdef PERFCAST_HAS_ISATTY
    perfcast::cli::progress_settings.terminal = isatty(STDERR_FILENO) == 1;
#endif
    // Standard output through a buffer that keeps the first write error and its reason.
    perfcast::cli::checked_file_buf out_buf(stdout);
    std::ostream out(&out_buf);
    const int status = perfcast::cli::dispatch(args, commands, out, std::cerr);
    out.flush();
    if (!out_buf.finish()) {
        std::cerr << "perfcast: cannot write standard output: " << out_buf.reason() << '\n';
        return status == perfcast::cli::exit_ok ? perfcast::cli::exit_failure : status;
    }
    return status;
}
