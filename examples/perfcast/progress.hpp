// examples/perfcast/progress.hpp: progress lines on stderr for a long run (issue 16), and the
// --quiet / --progress switches of the commands that may print them (whatif, calibrate,
// validate).
//
//   perfcast whatif: evaluating deployments: 812000 of 1769472 deployments (45.9 %), 4 s
//
// The rules (docs/whatif-serving.md, "Memory, time and progress"):
//   - only on stderr, never on stdout: a table, CSV or JSON is the same bytes with or without;
//   - only when stderr is a terminal (main.cpp says so in progress_settings), or with
//     --progress (a log file, CI); never with --quiet;
//   - the first line once the run has taken 2 s (a quick run prints nothing), then at most one
//     line every 2 s, so a long run does not flood a terminal or a log.
// The library reports units of work through a progress_fn (include/perfcast/progress.hpp);
// this file only decides what to print and when.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <perfcast/io/table.hpp>
#include <perfcast/progress.hpp>

#include "cli.hpp"

namespace perfcast::cli {

inline constexpr option quiet_option{
    "quiet", "", "no progress lines on stderr (shown on a terminal once a run takes 2 s)"};
inline constexpr option progress_option{"progress", "",
                                        "progress lines on stderr even when it is not a terminal"};

/// When progress lines are printed. main() sets `terminal`; the delays are the documented 2 s
/// (tests set them to 0 so that every report prints, which keeps them fast and deterministic).
struct progress_policy {
    bool terminal = false;                     // stderr is a terminal
    std::chrono::milliseconds delay{2000};     // quiet until the run has taken this long
    std::chrono::milliseconds interval{2000};  // then at most one line per interval
};

inline progress_policy progress_settings{};

/// "812000 of 1769472 deployments (45.9 %)", or "2400 evaluations" when the total is unknown.
[[nodiscard]] inline std::string progress_text(const progress_step& s) {
    std::string t = std::to_string(s.done);
    if (s.total > 0) {
        const double share = static_cast<double>(s.done) / static_cast<double>(s.total);
        t += " of " + std::to_string(s.total) + " " + std::string(s.unit) + " (" +
             io::format_fixed(100 * share, 1) + " %)";
    } else {
        t += " " + std::string(s.unit);
    }
    return t;
}

/// The progress function of a command's run: empty with --quiet, or when stderr is not a
/// terminal and --progress is not given; otherwise one that prints
/// "perfcast <command>: <task>: <progress_text>, <seconds> s" on `err` as the policy allows.
/// `err` must outlive the computation (it is the command's own error stream).
[[nodiscard]] inline progress_fn progress_from_args(const parsed_args& a, std::ostream& err,
                                                    std::string_view command) {
    if (a.has("quiet") && a.has("progress")) {
        throw usage_error("give --quiet (no progress lines) or --progress (always), not both");
    }
    if (a.has("quiet") || !(a.has("progress") || progress_settings.terminal)) return {};
    using clock = std::chrono::steady_clock;
    struct state {
        std::ostream* err;
        std::string prefix;
        progress_policy policy;
        clock::time_point start;
        clock::time_point next;  // no line before this
    };
    const clock::time_point now = clock::now();
    auto st = std::make_shared<state>(state{&err, "perfcast " + std::string(command) + ": ",
                                            progress_settings, now, now + progress_settings.delay});
    return [st](const progress_step& s) {
        const clock::time_point t = clock::now();
        if (t < st->next) return;
        st->next = t + st->policy.interval;
        const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(t - st->start);
        *st->err << st->prefix << s.task << ": " << progress_text(s) << ", " << seconds.count()
                 << " s\n"
                 << std::flush;
    };
}

}  // namespace perfcast::cli
