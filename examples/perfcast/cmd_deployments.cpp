// examples/perfcast/cmd_deployments.cpp: `perfcast calibrate --deployments` and
// `perfcast validate --deployments`, the model against measured deployments end to end.
// Declared in command_parts.hpp; cmd_validate.cpp hands the --deployments forms here.
//
//   perfcast calibrate --deployments ROWS.csv --knobs K[,K..] [--params F] -o FILE
//   perfcast validate  --deployments ROWS.csv --knobs K[,K..] [--train ROWS] [--params F]
//                      [--format table|json]
//
// ROWS.csv: io/deployments_file.hpp (docs/runtime.md). The knobs are runtime-path times and
// device efficiencies (deployment.hpp deployment_knobs). validate fits on --train (row numbers,
// 1 = the first data row) and predicts every other row; without --train, leave-one-out.

#include <algorithm>
#include <array>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/deployment.hpp>
#include <perfcast/io/deployments_file.hpp>
#include <perfcast/io/gains_report.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/table.hpp>

#include "cli.hpp"
#include "command_parts.hpp"
#include "common.hpp"
#include "onnx_source.hpp"

namespace perfcast::cli {

namespace deployments_detail {

inline constexpr option rows_option{"deployments", "FILE",
                                    "measured deployment rows (docs/runtime.md)"};
inline constexpr option knobs_option{
    "knobs", "LIST",
    "what to fit, e.g. launch_us,between_us (runtime-path times or cube_efficiency, "
    "vector_efficiency, hbm_efficiency); validate: none scores the model as it is"};

inline constexpr std::array<option, 6> validate_options{{
    rows_option,
    knobs_option,
    {"train", "LIST", "rows to fit on (1 = the first data row), e.g. 1,4; default: leave-one-out"},
    {"by", "COLUMN",
     "hold out whole configurations: rows equal in COLUMN (options, instances, "
     "batch, split, model, runtime, chip, host_threads, chips_per_card) predicted by a fit on "
     "the others"},
    params_option,
    {"format", "FORMAT", "table (default) or json"},
}};

inline constexpr std::array<option, 4> calibrate_options{{
    rows_option,
    knobs_option,
    params_option,
    {"output", "FILE", "write the fitted parameters here (also -o FILE)"},
}};

[[nodiscard]] inline std::vector<std::string> knobs_from(const parsed_args& a) {
    const auto t = a.get("knobs");
    if (!t || t->empty()) {
        throw usage_error("needs --knobs LIST: what to fit, from " + deployment_knob_names());
    }
    if (*t == "none") {
        throw usage_error(
            "option '--knobs': none fits nothing, which only validate does (it "
            "scores the model as it is); calibrate fits at least one of " +
            deployment_knob_names());
    }
    std::vector<std::string> out;
    for (std::string_view k : io::split(*t, ',')) {
        // An unknown (or empty) name, or one named twice: the command line is wrong.
        const bool known = std::any_of(deployment_knobs.begin(), deployment_knobs.end(),
                                       [&](const deployment_knob& d) { return d.name == k; });
        if (!known) {
            throw usage_error("option '--knobs': '" + std::string(k) + "' is not a knob (" +
                              deployment_knob_names() + ")");
        }
        if (std::find(out.begin(), out.end(), k) != out.end())
            throw usage_error("option '--knobs': '" + std::string(k) + "' is named twice");
        out.emplace_back(k);
    }
    return out;
}

/// --chip / --chip-ini, which the profile modes take: a deployments file names each row's chip.
inline void refuse_chip_flags(std::span<const std::string_view> args) {
    if (std::find(args.begin(), args.end(), "--help") != args.end()) return;  // help first
    for (const std::string_view w : args) {
        for (const std::string_view flag : {"--chip", "--chip-ini"}) {
            if (w == flag ||
                (w.starts_with(flag) && w.size() > flag.size() && w[flag.size()] == '=')) {
                throw usage_error("option '" + std::string(flag) +
                                  "' does not apply with --deployments: each row names its "
                                  "chip (column chip)");
            }
        }
    }
}

/// A row's model: a model file, or an ONNX graph imported as --model imports it (its summary
/// on `err`).
[[nodiscard]] inline io::model_loader model_reader(std::ostream& err) {
    return [&err](const std::string& path) { return read_model_input(path, err); };
}

/// warn_runtime_vendor for the first row of each chip and runtime preset (a row's, else its
/// model's, else none), named by its origin.
inline void warn_rows_runtime(std::span<const deployment_case> rows, std::ostream& err) {
    std::vector<std::string> seen;
    for (const deployment_case& d : rows) {
        const std::string preset = runtime_preset_of(d.m.get(), d.runtime);
        const std::string key = std::string(d.c.name.view()) + "|" + preset;
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
        seen.push_back(key);
        warn_runtime_vendor(d.c, preset, err, d.origin);
    }
}

/// A warning per implausible measured figure of the rows (deployment.hpp
/// implausible_measurements), named by the row's origin: the figures are still used.
inline void warn_rows_implausible(std::span<const deployment_case> rows, std::ostream& err) {
    for (const deployment_case& d : rows) {
        for (const std::string& what : implausible_measurements(d)) {
            err << "perfcast: warning: " << d.origin << ": " << what << '\n';
        }
    }
}

/// warn_params_chip for each distinct chip of the rows (a deployments file may mix chips).
inline void warn_params_rows_chip(const parsed_args& a, const profile::calibration& cal,
                                  std::span<const deployment_case> rows, std::ostream& err,
                                  std::string_view use) {
    std::vector<std::string_view> seen;
    for (const deployment_case& d : rows) {
        if (std::find(seen.begin(), seen.end(), d.c.name.view()) != seen.end()) continue;
        seen.push_back(d.c.name.view());
        warn_params_chip(a, cal, d.c, err, use, false);  // no --transfer-from with rows
    }
}

[[nodiscard]] inline std::string knob_text(const fitted_knob& k) {
    const deployment_knob& d = knob_named(k.name);
    std::string s = k.name + " = " + io::format_significant(k.value, 4);
    if (!d.unit.empty()) s += " " + std::string(d.unit);
    if (k.at_bound) s += " (at its bound)";
    return s;
}

[[nodiscard]] inline std::string config_text(const deployment_case& d) {
    std::string s = io::deployment_text(d);
    // Rows that differ only in their host threads read apart (0, the default: one per instance).
    if (d.host_threads > 0) s += " threads=" + std::to_string(d.host_threads);
    if (!d.runtime.empty()) s += " " + d.runtime;
    for (const runtime_setting& r : d.settings) s += " " + r.key + "=" + r.value;
    return s;
}

/// A row's option as the runtime path reads it back (runtime_key::get): "sync_us=5.0" and
/// "sync_us=5" are one setting.
[[nodiscard]] inline std::string setting_text(const runtime_setting& r) {
    for (const runtime_key& k : runtime_keys) {
        if (k.key != r.key) continue;
        runtime_path p;
        k.set(p, r.key, r.value);  // the reader applied it already: valid
        return r.key + "=" + k.get(p);
    }
    return r.key + "=" + r.value;
}

/// The configuration a row belongs to under --by COLUMN, as the model reads the row, not as it
/// was written: options in key order ("memory=pinned copies=aggregated" and "copies=aggregated
/// memory=pinned" are one configuration; a row names each key once), the runtime resolved (a
/// blank cell is the model file's runtime, else none), so no configuration is on both sides.
[[nodiscard]] inline std::string group_key(const deployment_case& d, std::string_view by) {
    if (by == "options") {
        std::vector<std::string> set;
        for (const runtime_setting& r : d.settings) set.push_back(setting_text(r));
        std::sort(set.begin(), set.end());
        std::string k;
        for (const std::string& s : set) k += (k.empty() ? "" : " ") + s;
        return k.empty() ? std::string("(none)") : k;
    }
    if (by == "instances") return std::to_string(d.instances.value);
    if (by == "host_threads") return std::to_string(d.host_threads);
    if (by == "chips_per_card") return std::to_string(d.chips);
    if (by == "batch") return std::to_string(d.batch.value);
    if (by == "split") {
        return std::to_string(d.split.cube.value) + "/" + std::to_string(d.split.vector.value);
    }
    if (by == "model") return d.m ? d.m->name : std::string();
    if (by == "runtime") return runtime_preset_of(d.m.get(), d.runtime);
    return std::string(d.c.name.view());  // chip
}

[[nodiscard]] inline std::string pct_or_blank(const std::optional<double>& e) {
    return e ? io::format_fixed(100 * *e, 1) : std::string();
}

inline void write_table(std::ostream& out, std::string_view file,
                        std::span<const deployment_case> rows, const deployment_validation& v,
                        bool loo, std::string_view by = {}) {
    out << "deployments: " << file << ", " << rows.size() << " rows\n";
    if (!by.empty()) {
        out << "hold-out by " << by << ": each of the " << v.fits.size()
            << " configurations predicted by a fit on the others\n";
    } else if (v.fits.empty()) {
        out << "nothing fitted: every row predicted by the model as it is (--params or the "
               "defaults)\n";
    } else if (loo) {
        out << "leave-one-out: each row predicted by a fit on the other " << rows.size() - 1
            << "\n";
    } else {
        out << "fitted on rows";
        for (const deployment_score& s : v.rows) {
            if (s.trained) out << " " << s.row + 1;
        }
        out << ":";
        for (const fitted_knob& k : v.fits.front().knobs) out << " " << knob_text(k) << ";";
        out << " rms log error " << io::format_fixed(v.fits.front().rms_log_error, 4) << "\n";
    }
    out << "\n";
    io::text_table t({"row", "label", "deployment", "samples/s", "predicted", "err %", "latency ms",
                      "predicted", "err %", "p99 ms", "use"});
    for (const deployment_score& s : v.rows) {
        const deployment_case& d = rows[s.row];
        t.add_row({std::to_string(s.row + 1), d.label, config_text(d),
                   d.samples_per_s ? io::throughput_text(*d.samples_per_s) : std::string(),
                   io::throughput_text(s.predicted.samples_per_s), pct_or_blank(s.throughput_error),
                   d.latency ? io::format_fixed(d.latency->in(units::ms), 3) : std::string(),
                   io::format_fixed(s.predicted.latency.in(units::ms), 3),
                   pct_or_blank(s.latency_error),
                   d.p99 ? io::format_fixed(d.p99->in(units::ms), 3) : std::string(),
                   s.trained ? "fit" : "predicted"});
    }
    t.write(out);
    // No mean: no row was predicted (all fitted), or none predicted measured that figure.
    const std::string none =
        v.predicted_rows == 0 ? "(no row predicted: every row was fitted)" : "(none measured)";
    out << "\nmean absolute error over the " << v.predicted_rows << " predicted rows: throughput "
        << (v.throughput_mape ? io::format_fixed(100 * *v.throughput_mape, 1) + " %" : none)
        << ", latency "
        << (v.latency_mape ? io::format_fixed(100 * *v.latency_mape, 1) + " %" : none)
        << "\nlatency: the mean of the window each row's runtime path times (docs/runtime.md); "
           "p99 is\nshown as measured, not predicted (closed-loop rows have no queue).\n";
}

inline void write_json(std::ostream& out, std::string_view file,
                       std::span<const deployment_case> rows, const deployment_validation& v,
                       bool loo, std::string_view by = {}) {
    io::json_writer j(out);
    auto opt = [&](std::string_view k, const std::optional<double>& x) {  // null when absent
        j.key(k);
        if (x) {
            j.value(*x);
        } else {
            j.null();
        }
    };
    j.begin_object()
        .member("file", file)
        .member("method", !by.empty()      ? "by-" + std::string(by)
                          : v.fits.empty() ? std::string("none")
                          : loo            ? std::string("leave-one-out")
                                           : std::string("train"));
    j.key("fits").begin_array();
    for (const deployment_fit& f : v.fits) {
        j.begin_object();
        j.key("knobs").begin_object();
        for (const fitted_knob& k : f.knobs) j.member(k.name, k.value);
        j.end_object();
        j.member("rms_log_error", f.rms_log_error).end_object();
    }
    j.end_array();
    j.key("rows").begin_array();
    for (const deployment_score& s : v.rows) {
        const deployment_case& d = rows[s.row];
        j.begin_object()
            .member("row", static_cast<double>(s.row + 1))
            .member("origin", d.origin)
            .member("label", d.label)
            .member("deployment", config_text(d))
            .member("trained", s.trained);
        opt("measured_samples_per_s", d.samples_per_s);
        j.member("predicted_samples_per_s", s.predicted.samples_per_s);
        opt("throughput_error", s.throughput_error);
        opt("measured_latency_ms",
            d.latency ? std::optional<double>(d.latency->in(units::ms)) : std::nullopt);
        j.member("predicted_latency_ms", s.predicted.latency.in(units::ms));
        opt("latency_error", s.latency_error);
        opt("measured_p99_ms", d.p99 ? std::optional<double>(d.p99->in(units::ms)) : std::nullopt);
        io::write_steps_json(j, s.predicted.card);  // where the predicted task's time goes
        j.end_object();
    }
    j.end_array();
    j.member("predicted_rows", static_cast<double>(v.predicted_rows));
    opt("throughput_mape", v.throughput_mape);
    opt("latency_mape", v.latency_mape);
    j.end_object();
    out << '\n';
}

}  // namespace deployments_detail

namespace {

[[nodiscard]] std::string validate_deployments_usage() {
    return "Usage: perfcast validate --deployments ROWS.csv --knobs K[,K..] [--train LIST | --by "
           "COLUMN]\n\n"
           "Fit the runtime-path knobs to the --train rows of a measured deployments file and\n"
           "predict every other row (without --train: leave-one-out; --by COLUMN: whole\n"
           "configurations held out; --knobs none: nothing fitted), with each row's error in\n"
           "throughput and latency and the mean over the predicted rows (docs/runtime.md).\n\n" +
           options_text(deployments_detail::validate_options);
}

[[nodiscard]] std::string calibrate_deployments_usage() {
    return "Usage: perfcast calibrate --deployments ROWS.csv --knobs K[,K..] -o FILE\n\n"
           "Fit the runtime-path knobs to every row of a measured deployments file and write\n"
           "them (runtime.KEY lines and efficiencies) to FILE, for --params FILE.\n\n" +
           options_text(deployments_detail::calibrate_options);
}

}  // namespace

bool wants_deployments(std::span<const std::string_view> args) {
    for (std::string_view w : args) {
        if (w == "--deployments" || w.starts_with("--deployments=")) return true;
    }
    return false;
}

int run_validate_deployments(std::span<const std::string_view> args, std::ostream& out,
                             std::ostream& err) {
    using namespace deployments_detail;
    refuse_chip_flags(args);
    const parsed_args a = parse_args(args, validate_options);
    if (a.has("help")) {
        out << validate_deployments_usage();
        return exit_ok;
    }
    if (!a.positional.empty()) throw usage_error("unexpected argument '" + a.positional[0] + "'");
    const std::string format = choice(a, "format", {"table", "json"}, "table");
    const std::string file = *a.get("deployments");
    const auto rows = io::read_deployments_file(file, model_reader(err));
    warn_rows_runtime(rows, err);
    warn_rows_implausible(rows, err);
    const bool fit_nothing = a.get("knobs") && *a.get("knobs") == "none";
    const auto knobs = fit_nothing ? std::vector<std::string>{} : knobs_from(a);
    const profile::calibration base = params_from_args(a);
    warn_params_rows_chip(a, base, rows, err, fit_nothing ? "applied whole" : "each fit's start");
    note_type_terms_unused(a, base, err, "deployments' models price their nodes by op kind");
    const bool loo = !a.has("train");
    const std::string by = a.has("by")
                               ? choice(a, "by",
                                        {"options", "instances", "batch", "split", "model",
                                         "runtime", "chip", "host_threads", "chips_per_card"},
                                        "options")
                               : std::string();
    deployment_validation v;
    if (fit_nothing) {
        if (a.has("train") || a.has("by")) {
            throw usage_error("--knobs none fits nothing: --train and --by do not apply");
        }
        v = score_deployments(rows, base);
    } else if (!by.empty()) {
        if (a.has("train")) throw usage_error("--by and --train are two ways to hold out: one");
        v = validate_deployments_by_group(
            rows, knobs, [&](const deployment_case& d) { return group_key(d, by); }, base);
    } else if (loo) {
        if (rows.size() < 2) throw usage_error("leave-one-out needs at least 2 rows");
        v = validate_deployments_loo(rows, knobs, base);
    } else {
        std::vector<std::size_t> train;
        for (std::int64_t r : parse_list("train", *a.get("train"))) {
            if (r > static_cast<std::int64_t>(rows.size())) {
                throw usage_error("option '--train': row " + std::to_string(r) + " of " +
                                  std::to_string(rows.size()));
            }
            train.push_back(static_cast<std::size_t>(r - 1));
        }
        v = validate_deployments(rows, knobs, train, base);
    }
    if (format == "json") {
        write_json(out, file, rows, v, loo, by);
    } else {
        write_table(out, file, rows, v, loo, by);
    }
    return exit_ok;
}

int run_calibrate_deployments(std::span<const std::string_view> args, std::ostream& out,
                              std::ostream& err) {
    using namespace deployments_detail;
    std::vector<std::string_view> words(args.begin(), args.end());
    for (auto& w : words) {
        if (w == "-o") w = "--output";
    }
    refuse_chip_flags(words);
    const parsed_args a = parse_args(words, calibrate_options);
    if (a.has("help")) {
        out << calibrate_deployments_usage();
        return exit_ok;
    }
    if (!a.positional.empty()) throw usage_error("unexpected argument '" + a.positional[0] + "'");
    if (!a.has("output")) throw usage_error("needs -o FILE");
    const io::output_file target = *output_from_args(a, "output");
    const std::string file = *a.get("deployments");
    refuse_output_over_input(target, file);
    const auto rows = io::read_deployments_file(file, model_reader(err));
    warn_rows_runtime(rows, err);
    warn_rows_implausible(rows, err);
    const auto knobs = knobs_from(a);
    const profile::calibration base = params_from_args(a);
    warn_params_rows_chip(a, base, rows, err, "the fit's start");
    note_type_terms_unused(a, base, err, "deployments' models price their nodes by op kind");
    const deployment_fit fit = fit_deployments(rows, knobs, base);
    const std::string path = *a.get("output");
    io::write_output(target, [&](std::ostream& f) {
        io::write_params(
            f, fit.cal, "fitted on " + std::to_string(rows.size()) + " deployment rows of " + file);
    });
    out << "fitted " << fit.figures << " measured figures of " << rows.size() << " rows in "
        << fit.iterations << " iterations:";
    for (const fitted_knob& k : fit.knobs) out << " " << knob_text(k) << ";";
    out << " rms log error " << io::format_fixed(fit.rms_log_error, 4) << "; wrote " << path
        << '\n';
    return exit_ok;
}

}  // namespace perfcast::cli
