// fit_heads: the presets' default head costs (launch + per_core x b, per engine; the AI CPU's
// launch alone) fitted on measured profiles and scored leave-one-profile-out (profile/head_fit.hpp;
// docs/validation.md, "Defaults that hold before calibration").
//
//   fit_heads NAME=CHIP:PATH[,PATH...] ... [--score NAME=CHIP:PATH[,PATH...] ...]
//             [--max-body-us X] [--load-latency-max-us X]
//
// Every profile before --score is a fit profile (several paths: one profile, e.g. two ranks of
// one run). For each fit profile the heads are fitted on the others and scored on it; then the
// heads are fitted on all of them and printed, and scored on each --score profile, which no fit
// sees. Rows: the AI_CORE, AI_VECTOR_CORE and MIX rows the model maps, with their sequence
// context (as `perfcast validate` annotates them); the cube rows fit the cube head, the vector
// rows the vector head, the AI_CPU rows the AI CPU launch. The scores are each profile's MAPE
// over its cube and vector rows, and apart over its AI CPU rows, with the chip's own heads and
// with the fitted ones. With --load-latency-max-us X the chips' load latency
// (chip::overhead.load_latency, which a kernel that reads waits and a fill does not) is fitted
// first, on [0, X] in steps of X / 100: the one whose vector head fit on every fit profile has the
// least objective; the heads are then fitted with it.
//
// Example (docs/validation.md):
//   fit_heads 910B1_train=910B1:tests/data/profiles/kernel_details_910B1_train.csv ...
#include <cmath>
#include <cstdio>
#include <exception>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "perfcast/chips.hpp"
#include "perfcast/profile/calibrate.hpp"
#include "perfcast/profile/context.hpp"
#include "perfcast/profile/head_fit.hpp"
#include "perfcast/profile/kernel_details.hpp"

namespace {

using namespace perfcast;

constexpr std::string_view usage =
    "Usage: fit_heads NAME=CHIP:PATH[,PATH...] ... [--score NAME=CHIP:PATH[,PATH...] ...]\n"
    "\n"
    "Fits the cube and vector head costs (launch + per_core x cores) and the AI CPU launch on\n"
    "the profiles before --score, leave-one-profile-out and then on all of them, and scores the\n"
    "fit on each --score profile (never fitted on). --max-body-us X: the head-bound rows' longest\n"
    "body (default 1). --load-latency-max-us X: first fit the load latency a reading kernel waits\n"
    "and a fill does not, on [0, X].\n";

struct profile_set {
    std::string name;
    chip c;
    std::vector<profile::measured_op> rows;  // cube and vector rows on AI cores, AI CPU rows
};

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t from = 0;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == sep) {
            out.emplace_back(s.substr(from, i - from));
            from = i + 1;
        }
    }
    return out;
}

profile_set load(std::string_view spec) {
    const auto eq = spec.find('=');
    const auto colon = spec.find(':', eq == std::string_view::npos ? 0 : eq);
    if (eq == std::string_view::npos || colon == std::string_view::npos)
        throw error(std::string("fit_heads: expected NAME=CHIP:PATH, got ") + std::string(spec));
    profile_set p;
    p.name = std::string(spec.substr(0, eq));
    const std::string chip_name(spec.substr(eq + 1, colon - eq - 1));
    const auto c = chips::find_chip(chip_name);
    if (!c) throw error("fit_heads: unknown chip " + chip_name);
    p.c = *c;
    for (const std::string& path : split(spec.substr(colon + 1), ',')) {
        auto ops = profile::core_ops(p.c, profile::read_kernel_details_file(path).rows, true);
        p.rows.insert(p.rows.end(), ops.begin(), ops.end());
    }
    return p;
}

/// The fitted head of one engine; none when the profiles fitted on have no head-bound row of
/// it (the chip's own head is kept).
struct heads {
    std::optional<profile::head_fit> cube;
    std::optional<profile::head_fit> vector;
    std::optional<profile::head_fit> aicpu;

    [[nodiscard]] const std::optional<profile::head_fit>& of(engine e) const {
        return e == engine::cube ? cube : e == engine::vector ? vector : aicpu;
    }
    [[nodiscard]] std::optional<profile::head_fit>& of(engine e) {
        return e == engine::cube ? cube : e == engine::vector ? vector : aicpu;
    }
};

heads fit_on(const std::vector<profile_set>& sets, std::size_t skip, duration max_body) {
    heads h;
    for (engine e : {engine::cube, engine::vector, engine::aicpu}) {
        std::vector<std::vector<profile::head_row>> per_profile;
        std::size_t n = 0;
        // An AI CPU op's time is its launch (an AI CPU kernel of the profiles converts one
        // scalar): every row of it fits the launch, on a box up to 1 ms, with no per-core term.
        const bool aicpu = e == engine::aicpu;
        for (std::size_t i = 0; i < sets.size(); ++i) {
            if (i == skip) continue;
            per_profile.push_back(profile::head_rows(
                sets[i].c, sets[i].rows, e, aicpu ? duration{1e300, units::us} : max_body));
            n += per_profile.back().size();
        }
        if (n == 0) continue;
        profile::head_fit_options opt;
        if (aicpu) {
            opt.launch_max_us = 1000;
            opt.per_core_max_us = 0;
        }
        h.of(e) = profile::fit_head(per_profile, opt);
    }
    return h;
}

/// MAPE (percent) of the set's rows on `engines` with the chip's heads, or with `h`; -1 when it
/// has none.
double mape(const profile_set& s, const heads* h, std::initializer_list<engine> engines) {
    double sum = 0;
    std::size_t n = 0;
    for (engine e : engines) {
        const auto rows = profile::head_rows(s.c, s.rows, e, duration{1e300, units::us});
        const std::optional<profile::head_fit>* f = h ? &h->of(e) : nullptr;
        for (const profile::head_row& r : rows) {
            const double head =
                f && *f ? (*f)->launch.in(units::us) + (*f)->per_core.in(units::us)*r.cores
                        : head_time(s.c, e, static_cast<int>(r.cores)).in(units::us);
            sum += std::abs((head + r.body_us) / r.measured_us - 1.0);
            ++n;
        }
    }
    return n == 0 ? -1.0 : 100.0 * sum / static_cast<double>(n);
}

std::string us(duration d, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, d.in(units::us));
    return buf;
}

std::string describe(const std::optional<profile::head_fit>& f) {
    if (!f) return "kept (no head-bound row)";
    return us(f->launch, 2) + " us + " + us(f->per_core, 3) + " us/core (" +
           std::to_string(f->rows) + " rows)";
}

std::string describe_aicpu(const std::optional<profile::head_fit>& f) {
    if (!f) return "kept (no AI CPU row)";
    return us(f->launch, 2) + " us (" + std::to_string(f->rows) + " rows)";
}

std::string pct(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %%", v);
    return buf;
}

/// The set's MAPE over its cube and vector rows with the chip's heads and with `h`, and over
/// its AI CPU rows when it has some.
std::string scores(const profile_set& s, const heads& h) {
    std::string out = "MAPE with the chip's heads " +
                      pct(mape(s, nullptr, {engine::cube, engine::vector})) + ", fitted " +
                      pct(mape(s, &h, {engine::cube, engine::vector}));
    if (const double own = mape(s, nullptr, {engine::aicpu}); own >= 0)
        out += "; AI CPU rows " + pct(own) + ", fitted " + pct(mape(s, &h, {engine::aicpu}));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<profile_set> fit;
        std::vector<profile_set> score;
        bool scoring = false;
        // Rows whose body under the preset is at most this are head-bound (the default 1 us:
        // under the vector kernels' measured floor of about 1.3 us; an assumption).
        duration max_body{1.0, units::us};
        duration latency_max{};  // 0: the chips' load latency as it is
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            if (a == "-h" || a == "--help") {
                std::cout << usage;
                return 0;
            }
            if (a == "--score") {
                scoring = true;
                continue;
            }
            if (a == "--max-body-us" && i + 1 < argc) {
                max_body = duration{std::stod(argv[++i]), units::us};
                continue;
            }
            if (a == "--load-latency-max-us" && i + 1 < argc) {
                latency_max = duration{std::stod(argv[++i]), units::us};
                continue;
            }
            (scoring ? score : fit).push_back(load(a));
        }
        if (fit.size() < 2) {
            std::cerr << "fit_heads: give at least two fit profiles\n\n" << usage;
            return 2;
        }
        std::cout << "head-bound rows: body at most " << us(max_body, 2)
                  << " us under the preset\n";
        if (latency_max > duration{}) {
            std::vector<profile::chip_rows> sets;
            for (const profile_set& s : fit) sets.push_back({s.c, s.rows});
            const auto l = profile::fit_load_latency(std::move(sets), latency_max, max_body);
            for (profile_set& s : fit) s.c.overhead.load_latency = l.latency;
            for (profile_set& s : score) s.c.overhead.load_latency = l.latency;
            std::cout << "load latency fitted on [0, " << us(latency_max, 2)
                      << "] us: " << us(l.latency, 2) << " us (vector head " << describe(l.vector)
                      << ")\n";
        }
        std::cout << "leave one profile out (heads fitted on the others, scored on it):\n";
        for (std::size_t i = 0; i < fit.size(); ++i) {
            const heads h = fit_on(fit, i, max_body);
            std::cout << "  " << fit[i].name << " (" << fit[i].rows.size() << " rows): cube "
                      << describe(h.cube) << ", vector " << describe(h.vector) << ", AI CPU "
                      << describe_aicpu(h.aicpu) << "; " << scores(fit[i], h) << "\n";
        }
        const heads all = fit_on(fit, fit.size(), max_body);
        std::cout << "fitted on every fit profile: cube " << describe(all.cube) << ", vector "
                  << describe(all.vector) << ", AI CPU " << describe_aicpu(all.aicpu) << "\n";
        for (const profile_set& s : fit)
            std::cout << "  " << s.name << " (fitted on): " << scores(s, all) << "\n";
        for (const profile_set& s : score)
            std::cout << "  " << s.name << " (held out): " << scores(s, all) << "\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
}
