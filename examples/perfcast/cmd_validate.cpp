// examples/perfcast/cmd_validate.cpp and `perfcast calibrate`: the model against measurements.
//
//   perfcast calibrate PROFILE.csv --chip C -o FILE
//   perfcast validate --chip C [--params F] --fit A.csv --test B.csv
//   perfcast validate --chip C PROFILE.csv --holdout 0.3 --seed N
//   perfcast validate --chip C PROFILE.csv --holdout 0.3 --seeds 1-16 (repeated; mean and pooled)
//   perfcast validate --chip C [--params F] --test B.csv          (no fit: the given parameters)

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <perfcast/io/json.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/profile/calibrate.hpp>
#include <perfcast/profile/chip_evidence.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/transfer.hpp>
#include <perfcast/profile/validate.hpp>

#include "cli.hpp"
#include "command_parts.hpp"
#include "commands.hpp"
#include "common.hpp"
#include "progress.hpp"

namespace perfcast::cli {

namespace validate_detail {

inline constexpr option vector_efficiency_option{
    "vector-efficiency", "MODE",
    "choose (default: by cross-validation on the fit rows), fit or keep"};

inline constexpr option l2_efficiency_option{
    "l2-efficiency", "MODE",
    "fit (default: when at least 3 rows move with the chip's L2 rate) or keep"};

inline constexpr option hbm_mix_cost_option{"hbm-mix-cost", "MODE",
                                            "fit (default: when at least 3 rows move with the cost "
                                            "of mixing HBM reads and writes) or keep"};

inline constexpr std::array<option, 26> options{{
    chip_option,
    chip_ini_option,
    params_option,
    {"transfer-from", "C",
     "with --params: the chip they were fitted on; keep their per-type factors, the rest at "
     "--chip's defaults"},
    {"fit", "FILE", "profile whose rows calibrate the model"},
    {"test", "FILE", "profile whose rows are predicted and scored"},
    {"holdout", "SHARE", "with one PROFILE: hold out this share of rows (whole groups)"},
    {"seed", "N", "seed of the hold-out draw (default 1)"},
    {"seeds", "A-B", "hold out for each seed A to B: each seed, the means, rows by type"},
    {"tasks", "LIST", "task types to score, e.g. AI_CORE,AI_VECTOR_CORE (default: all)"},
    {"types", "LIST", "op types to score, e.g. MatMul,BatchMatMul (default: all)"},
    {"interpolate", "",
     "predict each scored row from measured fit rows of its op type at neighbouring sizes, "
     "scaled by the model; the model where there are none"},
    {"near-window", "R",
     "with --interpolate: neighbours within R x the row's model time (default 4)"},
    {"worst", "N", "worst rows to list (default 10; 0: all)"},
    {"breakdown", "",
     "the errors also by what bounds each model prediction (overhead: the head; memory; "
     "compute) and, calibrated, by whether the fit rows held the row's op type"},
    {"unmapped", "",
     "list the rows the model cannot predict, each with why (its task, dtypes, shapes, or the "
     "chip's rates)"},
    {"format", "FORMAT", "table (default) or json"},
    vector_efficiency_option,
    l2_efficiency_option,
    hbm_mix_cost_option,
    strict_option,
    device_option,
    step_option,
    rank_option,
    quiet_option,
    progress_option,
}};

inline constexpr std::array<option, 14> calibrate_options{{
    chip_option,
    chip_ini_option,
    params_option,
    {"output", "FILE", "write the fitted parameters here (also -o FILE)"},
    {"tasks", "LIST", "task types to fit on (default: all)"},
    vector_efficiency_option,
    l2_efficiency_option,
    hbm_mix_cost_option,
    strict_option,
    device_option,
    step_option,
    rank_option,
    quiet_option,
    progress_option,
}};

/// --vector-efficiency, --l2-efficiency and --hbm-mix-cost MODE as calibration options, with
/// `progress`
/// (progress_from_args).
inline profile::calibration_options calibration_options_from(const parsed_args& a,
                                                             progress_fn progress = {}) {
    profile::calibration_options opt;
    opt.progress = std::move(progress);
    static_assert(profile::default_min_l2_rows == 3, "the help text says 3 rows");
    if (a.has("l2-efficiency")) {
        const std::string m = *a.get("l2-efficiency");
        if (m == "fit") opt.fit_l2_efficiency = true;
        else if (m == "keep") opt.fit_l2_efficiency = false;
        else throw usage_error("--l2-efficiency " + m + ": expected fit or keep");
    }
    if (a.has("hbm-mix-cost")) {
        const std::string m = *a.get("hbm-mix-cost");
        if (m == "fit") opt.fit_hbm_mix_cost = true;
        else if (m == "keep") opt.fit_hbm_mix_cost = false;
        else throw usage_error("--hbm-mix-cost " + m + ": expected fit or keep");
    }
    if (!a.has("vector-efficiency")) return opt;
    const std::string m = *a.get("vector-efficiency");  // a copy: get() returns a temporary
    if (m == "choose") opt.vector_efficiency = profile::vector_efficiency_fit::choose;
    else if (m == "fit") opt.vector_efficiency = profile::vector_efficiency_fit::fit;
    else if (m == "keep") opt.vector_efficiency = profile::vector_efficiency_fit::keep;
    else
        throw usage_error("--vector-efficiency " + std::string(m) +
                          ": expected choose, fit or keep");
    return opt;
}

/// Keeps rows whose task type / op type is in the comma-separated lists (empty: all).
struct row_filter {
    std::vector<std::string> tasks;
    std::vector<std::string> types;
    bool operator()(const profile::kernel_row& r) const {
        const auto in = [](const std::vector<std::string>& l, const std::string& v) {
            if (l.empty()) return true;
            for (const auto& x : l)
                if (x == v) return true;
            return false;
        };
        return in(tasks, r.task_text) && in(types, r.op_type);
    }
};

inline std::vector<std::string> list_of(const parsed_args& a, std::string_view name) {
    std::vector<std::string> out;
    if (auto v = a.get(name)) {
        for (std::string_view p : io::split(*v, ','))
            if (!io::trim(p).empty()) out.emplace_back(io::trim(p));
    }
    return out;
}

inline std::vector<profile::kernel_row> filtered(const std::vector<profile::kernel_row>& rows,
                                                 const row_filter& f) {
    std::vector<profile::kernel_row> out;
    for (const auto& r : rows)
        if (f(r)) out.push_back(r);
    return out;
}

/// The profiles of one validate / calibrate run, each read once. The chip: --chip / --chip-ini,
/// else the one the scored (or fitted) profile's own data names (common.hpp read_profile_rows:
/// a database's NPU_INFO or the rows' cube_utilization(%) column), the evidence on stderr.
class profile_rows {
public:
    profile_rows(const parsed_args& a, std::ostream& err) : a_(a), err_(err) {}

    /// The chip, from the flags or from the profile at `path` (whose rows are then kept).
    [[nodiscard]] chip chip_for(const std::string& path) {
        if (path.empty() || a_.has("chip") || a_.has("chip-ini")) return chip_from_args(a_);
        chip_told told;
        profile::kernel_table t = read_profile_rows(a_, path, err_, &told);
        damaged_[path] = t.skipped_count;
        kept_ = std::move(t.rows);
        kept_path_ = path;
        if (!told.c) throw usage_error(told.why_not);
        return *told.c;
    }

    /// The rows of `path` with their sequence context (profile/context.hpp) for chip `c`:
    /// annotated before any filter or hold-out split, so a held-out row still knows which rows
    /// ran before it.
    [[nodiscard]] std::vector<profile::kernel_row> in_context(const std::string& path,
                                                              const chip& c,
                                                              const model_params& p) {
        std::vector<profile::kernel_row> rows;
        if (kept_ && path == kept_path_) {
            rows = std::move(*kept_);
            kept_.reset();
        } else {
            profile::kernel_table t = read_profile_rows(a_, path, err_);
            damaged_[path] = t.skipped_count;
            rows = std::move(t.rows);
        }
        note_rows_chip(a_, c, rows, path, err_);
        warn_block_dims(c, rows, path, err_);
        profile::annotate_context(rows, c, p);
        return rows;
    }

    /// The damaged rows the reader skipped (listed on stderr) in the files read, each once.
    [[nodiscard]] std::size_t damaged() const {
        std::size_t n = 0;
        for (const auto& [path, count] : damaged_) n += count;
        return n;
    }

private:
    const parsed_args& a_;
    std::ostream& err_;
    std::optional<std::vector<profile::kernel_row>> kept_;
    std::string kept_path_;
    std::map<std::string, std::size_t> damaged_;
};

/// "fitted on N rows: mean |log error| a -> b; vector efficiency fitted (CV MAPE x % vs y %);
/// ...; L2 efficiency e (M rows the L2 rate moves); HBM mix cost xc (K rows it moves)", the
/// last two only when fitted.
inline std::string fit_summary(const profile::calibration_result& r) {
    std::string s = "fitted on " + std::to_string(r.rows) + " rows: mean |log error| " +
                    io::format_fixed(r.log_error_before, 3) + " -> " +
                    io::format_fixed(r.log_error_after, 3) + "; vector efficiency " +
                    (r.vector_efficiency_fitted ? "fitted" : "kept");
    if (r.cv_error_fitted > 0 || r.cv_error_kept > 0)
        s += " (cross-validated MAPE " + io::format_fixed(100 * r.cv_error_fitted, 1) +
             " % fitted, " + io::format_fixed(100 * r.cv_error_kept, 1) + " % kept)";
    const auto factors = std::count_if(r.fitted.work_factor.begin(), r.fitted.work_factor.end(),
                                       [](const auto& kv) { return kv.second != 1.0; });
    // Types whose terms are one input pattern's (calibration::at_pattern keys, "Type[pattern]"),
    // each counted once.
    std::set<std::string, std::less<>> one_pattern;
    const auto count_one_pattern = [&](const auto& terms) {
        for (const auto& kv : terms)
            if (kv.first.find('[') != std::string::npos) one_pattern.insert(kv.first);
    };
    count_one_pattern(r.fitted.work_factor);
    count_one_pattern(r.fitted.fixed_time);
    count_one_pattern(r.fitted.per_core_time);
    s += "; " + std::to_string(factors) + " op types with a work factor, " +
         std::to_string(r.fitted.fixed_time.size()) + " with a fixed time, " +
         std::to_string(r.fitted.per_core_time.size()) + " with a time per core (" +
         std::to_string(one_pattern.size()) +
         " of them for one input pattern); heavy types without one x" +
         io::format_fixed(r.fitted.unseen_heavy_factor, 2);
    if (r.l2_efficiency_fitted)
        s += "; L2 efficiency " + io::format_fixed(r.fitted.params.l2_efficiency, 3) + " (" +
             std::to_string(r.l2_rows) + " rows the L2 rate moves)";
    if (r.hbm_mix_cost_fitted)
        s += "; HBM mix cost x" + io::format_fixed(r.fitted.params.hbm_mix_cost, 2) + " (" +
             std::to_string(r.mix_rows) + " rows it moves)";
    return s;
}

/// The unmapped rows' count by reason, most first: "62 not_compute, 20 shapes".
[[nodiscard]] inline std::string by_reason(const std::vector<profile::unmapped_row>& rows) {
    std::array<std::size_t, profile::unmapped_reason_names.size()> n{};
    for (const auto& u : rows) ++n[static_cast<std::size_t>(u.reason)];
    std::vector<std::size_t> order(n.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&n](std::size_t x, std::size_t y) { return n[x] > n[y]; });
    std::string out;
    for (const std::size_t i : order) {
        if (n[i] == 0) continue;
        out += (out.empty() ? "" : ", ") + std::to_string(n[i]) + " " +
               std::string(profile::unmapped_reason_names[i].name);
    }
    return out;
}

/// Why nothing was scored: validate exits 1 with this rather than print a MAPE of no rows.
/// `rows`: the rows to score before --tasks / --types (`what` names them), `kept`: after them,
/// `not_mappable`: kept rows the model cannot predict, each with why.
[[nodiscard]] inline perfcast::error nothing_scored(
    const std::string& what, std::size_t rows, std::size_t kept,
    const std::vector<profile::unmapped_row>& not_mappable, const parsed_args& a,
    std::string_view lead = "nothing scored (a MAPE over no rows is not 0 %)") {
    std::string s = std::string(lead) + ": " + what + " ";
    if (rows == 0) {
        return perfcast::error(s + "holds no row (an empty profile, or every row damaged)");
    }
    std::string filters;
    for (const char* f : {"tasks", "types"}) {
        if (const auto v = a.get(f))
            filters += (filters.empty() ? "--" : " and --") + std::string(f) + " " + *v;
    }
    s += "holds " + std::to_string(rows) + " rows";
    if (kept == 0) return perfcast::error(s + ", none of them kept by " + filters);
    if (!filters.empty()) s += ", " + std::to_string(kept) + " kept by " + filters;
    s += ", and the model maps none of them to an op (" + by_reason(not_mappable);
    if (!not_mappable.empty()) {
        const profile::unmapped_row& u = not_mappable.front();
        s += "; line " + std::to_string(u.line) + ", " + parse_error::printable(u.name) + ": " +
             u.detail;
    }
    return perfcast::error(s + ")");
}

/// Warns when the `fitted` rows a fit used (of `rows`, those the model maps on `c`) hold fewer
/// distinct ops (type, input shapes and dtypes) than the shared parameters the fit moves: they
/// cannot determine them (a few repeats of two shapes can put the HBM efficiency anywhere).
inline void warn_if_underdetermined(std::ostream& err, std::string_view command, const chip& c,
                                    const std::vector<profile::kernel_row>& rows,
                                    const profile::calibration& cal, std::size_t fitted,
                                    std::string_view consequence) {
    std::set<std::string> distinct;
    for (const profile::kernel_row& r : rows)
        if (profile::measured_op_of(c, r, cal)) distinct.insert(profile::group_key(r));
    if (distinct.size() >= profile::detail::param_space::size) return;
    err << "perfcast " << command << ": warning: the " << fitted << " rows fitted hold "
        << distinct.size() << " distinct ops (type, input shapes and dtypes) for the fit's "
        << profile::detail::param_space::size
        << " shared parameters (head costs, efficiencies): these rows cannot determine them, "
           "and "
        << consequence << "\n";
}

/// Throws nothing_scored unless the model maps some of `kept` (the rows to score after --tasks /
/// --types; `what` names them, `read` is their count before): a fit does not change which rows
/// map, so this runs before one.
inline void require_mapped(
    const chip& c, const std::vector<profile::kernel_row>& kept, const profile::calibration& cal,
    const std::string& what, std::size_t read, const parsed_args& a,
    std::string_view lead = "nothing scored (a MAPE over no rows is not 0 %)") {
    if (kept.empty()) throw nothing_scored(what, read, 0, {}, a, lead);
    if (const auto mapped = profile::score_rows(c, kept, cal); mapped.overall.rows == 0)
        throw nothing_scored(what, read, kept.size(), mapped.unmapped, a, lead);
}

inline std::string pct(double share) { return io::format_fixed(100.0 * share, 1) + " %"; }

/// The scored rows by where their prediction came from: measured neighbours, or the model.
/// `near_by_model`: the rows predicted from neighbours, as the model alone predicts them.
struct by_source {
    profile::error_stats near;
    profile::error_stats near_by_model;
    profile::error_stats model;
    std::size_t two_neighbours = 0;
    explicit by_source(const std::vector<profile::prediction>& rows) {
        std::vector<double> n, nm, m;
        for (const auto& p : rows) {
            if (p.source == profile::estimate_source::model) {
                m.push_back(p.ape);
                continue;
            }
            n.push_back(p.ape);
            nm.push_back(p.model_ape);
            if (p.source == profile::estimate_source::two_neighbours) ++two_neighbours;
        }
        near = profile::stats_of(n);
        near_by_model = profile::stats_of(nm);
        model = profile::stats_of(m);
    }
    void write(io::json_writer& j) const {
        const auto stats = [&](std::string_view name, const profile::error_stats& st) {
            j.key(name)
                .begin_object()
                .member("rows", static_cast<double>(st.rows))
                .member("mape", st.mape)
                .member("median_ape", st.median_ape)
                .end_object();
        };
        stats("from_neighbours", near);
        stats("from_neighbours_by_the_model", near_by_model);
        stats("from_model", model);
    }
    void write(std::ostream& out) const {
        out << "from measured neighbours: " << near.rows << " rows (" << two_neighbours
            << " between two), MAPE " << pct(near.mape) << ", median " << pct(near.median_ape)
            << " (the model alone on them: " << pct(near_by_model.mape) << ", median "
            << pct(near_by_model.median_ape) << "); from the model: " << model.rows
            << " rows, MAPE " << pct(model.mape) << ", median " << pct(model.median_ape) << "\n";
    }
};

inline std::string_view source_name(profile::estimate_source s) {
    switch (s) {
        case profile::estimate_source::one_neighbour: return "1 neighbour";
        case profile::estimate_source::two_neighbours: return "2 neighbours";
        case profile::estimate_source::model: break;
    }
    return "model";
}

/// Member `key`: the rows, MAPE, median and P90 APE of `st`.
inline void write_stats(io::json_writer& j, std::string_view key, const profile::error_stats& st) {
    j.key(key)
        .begin_object()
        .member("rows", static_cast<double>(st.rows))
        .member("mape", st.mape)
        .member("median_ape", st.median_ape)
        .member("p90_ape", st.p90_ape)
        .end_object();
}

/// The "by_type" member: rows, MAPE, median and P90 APE of each op type.
inline void write_by_type(io::json_writer& j, const std::vector<profile::type_stats>& by_type) {
    j.key("by_type").begin_object();
    for (const auto& t : by_type) write_stats(j, t.type, t.stats);
    j.end_object();
}

/// The same as a text table.
inline void write_by_type(std::ostream& out, const std::vector<profile::type_stats>& by_type) {
    io::text_table bt({"type", "rows", "MAPE", "median APE", "P90 APE"});
    for (const auto& t : by_type) {
        bt.add_row({t.type, std::to_string(t.stats.rows), pct(t.stats.mape),
                    pct(t.stats.median_ape), pct(t.stats.p90_ape)});
    }
    bt.write(out);
}

/// The measurement spread of a report's rows (error_report::repeat_floor) as a JSON member.
inline void write_floor(io::json_writer& j, const profile::error_report& rep) {
    j.key("repeat_floor")
        .begin_object()
        .member("repeated_rows", static_cast<double>(rep.repeated_rows))
        .member("mape", rep.repeat_floor.mape)
        .member("median_ape", rep.repeat_floor.median_ape)
        .end_object();
}

/// The same as a line, when some row repeats an op.
inline void write_floor(std::ostream& out, const profile::error_report& rep) {
    if (rep.repeated_rows == 0) return;
    out << "measurement spread: " << rep.repeated_rows << " of " << rep.overall.rows
        << " rows repeat an op (same type, input shapes and dtypes); each row predicted by its"
           " op's median measurement: MAPE "
        << pct(rep.repeat_floor.mape) << ", median " << pct(rep.repeat_floor.median_ape) << "\n";
}

/// The rows whose op the fit rows measured too (error_report::twin_floor) as a JSON member.
inline void write_twins(io::json_writer& j, const profile::error_report& rep) {
    j.key("fit_twins")
        .begin_object()
        .member("rows", static_cast<double>(rep.twinned_rows))
        .member("mape", rep.twin_floor.mape)
        .member("median_ape", rep.twin_floor.median_ape)
        .member("model_mape", rep.twin_model.mape)
        .member("model_median_ape", rep.twin_model.median_ape)
        .end_object();
}

/// The same as a line, when some scored row's op was measured in the fit rows.
inline void write_twins(std::ostream& out, const profile::error_report& rep) {
    if (rep.twinned_rows == 0) return;
    out << "measured in the fit rows too: " << rep.twinned_rows << " of " << rep.overall.rows
        << " rows are an op (same type, input shapes and dtypes) the fit rows measured; each"
           " predicted by the fit rows' median measurement of it: MAPE "
        << pct(rep.twin_floor.mape) << ", median " << pct(rep.twin_floor.median_ape)
        << " (the prediction on them: " << pct(rep.twin_model.mape) << ", median "
        << pct(rep.twin_model.median_ape) << ")\n";
}

/// The errors by bound and by whether the fit rows held the op type (error_report::by_bound,
/// type_held, type_lacked): what --breakdown adds. A kind without rows is left out.
struct breakdown {
    struct kind {
        std::string_view key;    // the JSON member
        std::string_view label;  // the table's
        profile::error_stats stats;
    };
    std::vector<kind> kinds;
    explicit breakdown(const profile::error_report& rep) {
        const auto add = [&](std::string_view key, std::string_view label,
                             const profile::error_stats& st) {
            if (st.rows > 0) kinds.push_back({key, label, st});
        };
        const auto bound = [&](bound_kind b) { return rep.by_bound[static_cast<std::size_t>(b)]; };
        add("overhead_bound", "overhead-bound", bound(bound_kind::overhead));
        add("memory_bound", "memory-bound", bound(bound_kind::memory));
        add("compute_bound", "compute-bound", bound(bound_kind::compute));
        add("type_in_fit", "type in the fit rows", rep.type_held);
        add("type_not_in_fit", "type not in the fit rows", rep.type_lacked);
    }
    void write(io::json_writer& j) const {
        j.key("breakdown").begin_object();
        for (const kind& k : kinds) write_stats(j, k.key, k.stats);
        j.end_object();
    }
    void write(std::ostream& out) const {
        out << "\nby what bounds the model's prediction (overhead: its head), and by whether the "
               "fit rows held the row's op type:\n";
        io::text_table t({"rows", "count", "MAPE", "median APE", "P90 APE"});
        for (const kind& k : kinds) {
            t.add_row({std::string(k.label), std::to_string(k.stats.rows), pct(k.stats.mape),
                       pct(k.stats.median_ape), pct(k.stats.p90_ape)});
        }
        t.write(out);
    }
};

/// What a report shows: the worst rows, the format, the source of each prediction (`near`:
/// --interpolate), the breakdown (--breakdown) and the rows not mappable (--unmapped).
struct report_options {
    std::size_t worst = 10;
    std::string format;
    bool near = false;
    bool by_kind = false;
    bool unmapped = false;
    std::size_t damaged = 0;  // damaged rows the reader skipped in the files read
};

/// "damaged rows skipped: 2 (listed on stderr; ...)", a line when there are some.
inline void write_damaged(std::ostream& out, std::size_t damaged) {
    if (damaged == 0) return;
    out << "damaged rows skipped: " << damaged
        << " (listed on stderr; not scored nor fitted; --strict makes the first an error)\n";
}

inline void write_unmapped(io::json_writer& j, const std::vector<profile::unmapped_row>& rows) {
    j.key("unmapped").begin_array();
    for (const auto& u : rows) {
        j.begin_object()
            .member("line", static_cast<double>(u.line))
            .member("name", std::string_view(u.name))
            .member("type", std::string_view(u.type))
            .member("task", std::string_view(u.task))
            .member("reason", name_of(u.reason))
            .member("detail", std::string_view(u.detail))
            .end_object();
    }
    j.end_array();
}

inline void write_unmapped(std::ostream& out, const std::vector<profile::unmapped_row>& rows) {
    out << "\nnot mappable: " << rows.size() << " rows";
    if (!rows.empty()) out << " (" << by_reason(rows) << ")";
    out << "\n";
    if (rows.empty()) return;
    io::text_table t({"line", "name", "type", "task", "reason", "why"});
    for (const auto& u : rows) {
        t.add_row({std::to_string(u.line), u.name, u.type, u.task, std::string(name_of(u.reason)),
                   u.detail});
    }
    t.write(out);
}

inline void write_report(std::ostream& out, const profile::error_report& rep,
                         const report_options& o, const profile::calibration_result* fit) {
    const std::size_t worst = o.worst;
    const bool near = o.near;
    const bool by_kind = o.by_kind;
    if (o.format == "json") {
        io::json_writer j(out);
        j.begin_object()
            .member("rows", static_cast<double>(rep.overall.rows))
            .member("skipped", static_cast<double>(rep.skipped))
            .member("damaged_rows_skipped", static_cast<double>(o.damaged))
            .member("mape", rep.overall.mape)
            .member("median_ape", rep.overall.median_ape)
            .member("p90_ape", rep.overall.p90_ape)
            .member("max_ape", rep.overall.max_ape);
        if (fit != nullptr) j.member("fit_rows", static_cast<double>(fit->rows));
        write_floor(j, rep);
        if (fit != nullptr) write_twins(j, rep);
        if (near) by_source(rep.rows).write(j);
        write_by_type(j, rep.by_type);
        if (by_kind) breakdown(rep).write(j);
        if (o.unmapped) write_unmapped(j, rep.unmapped);
        j.key("worst").begin_array();
        for (const auto& w : rep.worst(worst)) {
            j.begin_object()
                .member("line", static_cast<double>(w.line))
                .member("name", std::string_view(w.name))
                .member("type", std::string_view(w.type))
                .member("cores", w.cores)
                .member("measured_us", w.measured.in(units::us))
                .member("predicted_us", w.predicted.in(units::us))
                .member("ape", w.ape)
                .member("bound", name_of(w.bound));
            if (near) j.member("source", source_name(w.source));
            j.end_object();
        }
        j.end_array();
        j.end_object();
        out << '\n';
        return;
    }
    if (fit != nullptr) out << fit_summary(*fit) << "\n\n";
    out << "scored " << rep.overall.rows << " rows (" << rep.skipped << " not mappable): MAPE "
        << pct(rep.overall.mape) << ", median " << pct(rep.overall.median_ape) << ", P90 "
        << pct(rep.overall.p90_ape) << "\n";
    write_damaged(out, o.damaged);
    write_floor(out, rep);
    write_twins(out, rep);
    if (near) by_source(rep.rows).write(out);
    out << "\n";
    write_by_type(out, rep.by_type);
    if (by_kind) breakdown(rep).write(out);
    out << "\nworst rows:\n";
    std::vector<std::string> head{"line",        "name",         "type", "cores",
                                  "measured us", "predicted us", "APE"};
    if (near) head.emplace_back("from");
    if (by_kind) head.emplace_back("bound");
    io::text_table wt(head);
    for (const auto& w : rep.worst(worst)) {
        std::vector<std::string> row{std::to_string(w.line),
                                     w.name,
                                     w.type,
                                     std::to_string(w.cores),
                                     io::format_fixed(w.measured.in(units::us), 2),
                                     io::format_fixed(w.predicted.in(units::us), 2),
                                     pct(w.ape)};
        if (near) row.emplace_back(source_name(w.source));
        if (by_kind) row.emplace_back(name_of(w.bound));
        wt.add_row(row);
    }
    wt.write(out);
    if (o.unmapped) write_unmapped(out, rep.unmapped);
}

/// "A-B" (or "A") as the first and last seed.
inline std::pair<std::uint64_t, std::uint64_t> seed_range(std::string_view text) {
    const auto bad = [&] {
        return usage_error("--seeds " + std::string(text) +
                           ": expected A-B with 0 <= A <= B and at most 1000 seeds");
    };
    const auto dash = text.find('-');
    std::int64_t first = 0;
    std::int64_t last = 0;
    try {
        first = io::parse_int(text.substr(0, dash), "--seeds");
        last = dash == std::string_view::npos ? first
                                              : io::parse_int(text.substr(dash + 1), "--seeds");
    } catch (const perfcast::error&) {
        throw bad();
    }
    if (first < 0 || last < first || last - first >= 1000) throw bad();
    return {static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last)};
}

inline void write_study(std::ostream& out, const profile::holdout_study& st,
                        const std::string& format, bool near, bool by_kind, std::size_t damaged) {
    const auto& runs = st.runs;
    if (format == "json") {
        io::json_writer j(out);
        j.begin_object()
            .member("holdout", st.share)
            .member("scored_seeds", st.scored_runs)
            .member("mean_mape", st.mean_mape)
            .member("mean_median_ape", st.mean_median_ape)
            .member("mean_p90_ape", st.mean_p90_ape)
            .member("mean_floor_mape", st.mean_floor_mape)
            .member("mean_floor_median_ape", st.mean_floor_median_ape)
            .member("damaged_rows_skipped", static_cast<double>(damaged));
        j.key("seeds").begin_array();
        for (const auto& r : runs) {
            // A seed that scored no row has no error (null, "-"), not 0 %.
            const auto score = [&r](double v) {
                return r.stats.rows > 0 ? v : std::numeric_limits<double>::quiet_NaN();
            };
            j.begin_object()
                .member("seed", r.seed)
                .member("fit_rows", r.fit_rows)
                .member("rows", r.stats.rows)
                .member("mape", score(r.stats.mape))
                .member("median_ape", score(r.stats.median_ape))
                .member("p90_ape", score(r.stats.p90_ape))
                .member("vector_efficiency",
                        std::string_view(r.vector_efficiency_fitted ? "fitted" : "kept"))
                .end_object();
        }
        j.end_array();
        j.key("pooled")
            .begin_object()
            .member("rows", st.pooled.overall.rows)
            .member("skipped", st.pooled.skipped)
            .member("mape", st.pooled.overall.mape)
            .member("median_ape", st.pooled.overall.median_ape)
            .member("p90_ape", st.pooled.overall.p90_ape);
        write_floor(j, st.pooled);
        if (near) by_source(st.pooled.rows).write(j);
        write_by_type(j, st.pooled.by_type);
        if (by_kind) breakdown(st.pooled).write(j);
        j.end_object();
        j.end_object();
        out << '\n';
        return;
    }
    out << "hold-out " << io::format_shortest(st.share) << " over seeds " << runs.front().seed
        << "-" << runs.back().seed;
    if (st.scored_runs < runs.size())
        out << " (" << st.scored_runs << " with held-out rows to score)";
    out << ": mean MAPE " << pct(st.mean_mape) << ", mean median APE " << pct(st.mean_median_ape)
        << ", mean P90 APE " << pct(st.mean_p90_ape) << "\n";
    write_damaged(out, damaged);
    if (st.pooled.repeated_rows > 0) {
        out << "measurement spread (each held-out row predicted by its op's median measurement): "
               "mean MAPE "
            << pct(st.mean_floor_mape) << ", mean median APE " << pct(st.mean_floor_median_ape)
            << "\n";
    }
    out << "\n";
    io::text_table t(
        {"seed", "fit rows", "scored", "MAPE", "median APE", "P90 APE", "vector efficiency"});
    for (const auto& r : runs) {
        const auto score = [&r](double v) { return r.stats.rows > 0 ? pct(v) : "-"; };
        t.add_row({std::to_string(r.seed), std::to_string(r.fit_rows), std::to_string(r.stats.rows),
                   score(r.stats.mape), score(r.stats.median_ape), score(r.stats.p90_ape),
                   r.vector_efficiency_fitted ? "fitted" : "kept"});
    }
    t.write(out);
    out << "\nby type, every seed's held-out rows together (" << st.pooled.overall.rows << " rows, "
        << st.pooled.skipped << " not mappable: MAPE " << pct(st.pooled.overall.mape) << "):\n";
    if (near) by_source(st.pooled.rows).write(out);
    write_by_type(out, st.pooled.by_type);
    if (by_kind) breakdown(st.pooled).write(out);
}

}  // namespace validate_detail

std::string validate_usage() {
    return "Usage: perfcast validate [--chip C] [--params F] --fit A.csv --test B.csv\n"
           "       perfcast validate [--chip C] PROFILE.csv --holdout 0.3 [--seed N | --seeds "
           "A-B]\n"
           "       perfcast validate [--chip C] [--params F] --test B.csv\n"
           "       perfcast validate --deployments ROWS.csv --knobs LIST [--train LIST]\n"
           "         (measured deployments end to end: 'perfcast validate --deployments F "
           "--help')\n\n"
           "Score the model against measured rows (msprof op_summary, torch_npu kernel_details\n"
           "or the minimal subset in docs/profiles.md; each file may also be an SQLite export,\n"
           "a profiler's output folder or - for standard input): MAPE, median and P90 absolute\n"
           "percentage error, by op type, worst rows. With --fit (or --holdout) the model is\n"
           "first calibrated on rows that are not scored. Without --chip / --chip-ini, the chip\n"
           "is the one the scored profile names (a database's NPU_INFO, or the cube cores x\n"
           "clock its cube_utilization(%) column gives), said on stderr.\n\n" +
           options_text(validate_detail::options);
}

int run_validate(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    using namespace validate_detail;
    if (wants_deployments(args)) return run_validate_deployments(args, out, err);
    const parsed_args a = parse_args(args, options);
    if (a.has("help")) {
        out << validate_usage();
        return exit_ok;
    }
    const std::string format = choice(a, "format", {"table", "json"}, "table");
    // Options of a fit or a hold-out draw, given where there is none: refused, not ignored.
    const bool fits = a.has("fit") || a.has("holdout");
    for (const std::string_view flag : {"vector-efficiency", "l2-efficiency", "hbm-mix-cost"}) {
        if (a.has(flag) && !fits)
            throw usage_error("--" + std::string(flag) +
                              " sets how a fit runs: it needs --fit FILE or PROFILE --holdout "
                              "SHARE");
    }
    if (a.value_or("fit", "") == "-" && a.value_or("test", "") == "-")
        throw usage_error(
            "--fit - and --test -: standard input is read once; give one of them "
            "a file");
    for (const std::string_view flag : {"seed", "seeds"}) {
        if (a.has(flag) && !a.has("holdout"))
            throw usage_error("--" + std::string(flag) +
                              " draws a hold-out: it needs PROFILE --holdout SHARE");
    }
    // Which files are read: checked before the chip, which may be asked of one of them.
    if (a.has("holdout")) {
        if (a.positional.size() != 1 || a.has("fit") || a.has("test"))
            throw usage_error("--holdout takes one PROFILE and no --fit / --test");
    } else {
        if (!a.positional.empty())
            throw usage_error("unexpected argument '" + a.positional[0] +
                              "': a PROFILE goes with --holdout SHARE (its rows split into fit and "
                              "scored); to score a file, --test FILE");
        if (!a.has("test")) throw usage_error("needs --test FILE (or PROFILE --holdout SHARE)");
    }
    const progress_fn progress = progress_from_args(a, err, "validate");
    profile_rows profiles(a, err);
    const chip c = profiles.chip_for(a.has("holdout") ? a.positional[0] : *a.get("test"));
    profile::calibration cal = params_from_args(a);
    if (const auto from = a.get("transfer-from")) {
        if (!a.has("params") || a.has("fit") || a.has("holdout"))
            throw usage_error(
                "--transfer-from scores a calibration of another chip: it needs "
                "--params FILE and no --fit / --holdout");
        const chip fitted_on = chips::get_chip(*from);
        if (!cal.chip.empty() && !same_chip_name(cal.chip, fitted_on.name.view()))
            throw usage_error("--transfer-from " + *from + ": " + *a.get("params") +
                              " was fitted for " + cal.chip + ", not " +
                              std::string(fitted_on.name.view()));
        if (same_chip_name(fitted_on.name.view(), c.name.view())) {
            err << "perfcast validate: note: --transfer-from " << *from
                << " names the chip scored: what is scored is what carries to another chip "
                   "(per-type factors; heads and efficiencies at the preset's), not the file "
                   "itself (without --transfer-from)\n";
        }
        cal = profile::transferred(cal, fitted_on, c);
    } else if (fits) {
        // The file is where the fit starts, not what is scored: no transfer to advise.
        warn_params_chip(a, cal, c, err, "the fit's start", false);
        note_type_terms_unused(a, cal, err,
                               "fit starts from the file's shared parameters and fits per-type "
                               "terms anew from the fit rows");
    } else {
        warn_params_chip(a, cal, c, err);
    }
    const row_filter keep{list_of(a, "tasks"), list_of(a, "types")};
    const std::size_t worst = row_count(a, "worst", 10);
    // --interpolate: the window of model time within which a fit row is a neighbour (0: off).
    double near_window = 0;
    if (a.has("near-window") && !a.has("interpolate"))
        throw usage_error("--near-window applies with --interpolate");
    if (a.has("interpolate")) {
        if (!a.has("fit") && !a.has("holdout"))
            throw usage_error(
                "--interpolate needs measured rows to interpolate from: --fit FILE "
                "or PROFILE --holdout SHARE");
        near_window = a.has("near-window")
                          ? io::parse_double(*a.get("near-window"), "--near-window")
                          : profile::default_near_window;
        if (!(near_window >= 1))
            throw usage_error("--near-window " + *a.get("near-window") +
                              ": expected a factor >= 1 of model time");
    }
    const bool near = near_window > 0;
    const bool by_kind = a.has("breakdown");

    std::vector<profile::kernel_row> fit_rows;
    std::vector<profile::kernel_row> test_rows;
    std::string scored_what;    // what the scored rows are, for nothing_scored
    std::size_t test_read = 0;  // their count before --tasks / --types
    if (a.has("holdout")) {
        const double share = io::parse_double(*a.get("holdout"), "--holdout");
        if (!(share > 0 && share < 1))
            throw usage_error("--holdout " + *a.get("holdout") +
                              ": expected the share of rows held out, in (0, 1)");
        if (a.has("seeds")) {
            if (a.has("seed")) throw usage_error("--seeds and --seed: give one");
            if (a.has("worst")) throw usage_error("--seeds lists no worst rows: drop --worst");
            if (a.has("unmapped"))
                throw usage_error(
                    "--seeds pools its seeds' rows: --unmapped lists one draw's (--seed N)");
            const auto [first, last] = seed_range(*a.get("seeds"));
            const auto rows = profiles.in_context(a.positional[0], c, cal.params);
            // No seed can score a row that the filters drop or the model cannot map: said
            // before the seeds' fits run, not after them.
            require_mapped(c, filtered(rows, keep), cal, a.positional[0], rows.size(), a);
            const auto study =
                profile::repeated_holdout(c, rows, share, first, last, keep, cal.params,
                                          calibration_options_from(a, progress), near_window);
            if (study.scored_runs == 0) {
                throw perfcast::error(
                    "nothing scored (a MAPE over no rows is not 0 %): no seed from " +
                    std::to_string(first) + " to " + std::to_string(last) + " holds out a row" +
                    (a.has("tasks") || a.has("types") ? " that --tasks / --types keep and" : "") +
                    " the model can predict (" + std::to_string(study.pooled.skipped) +
                    " held-out rows not mappable)");
            }
            write_study(out, study, format, near, by_kind, profiles.damaged());
            return exit_ok;
        }
        const std::int64_t seed = a.has("seed") ? io::parse_int(*a.get("seed"), "--seed") : 1;
        if (seed < 0) throw usage_error("--seed " + std::to_string(seed) + ": expected N >= 0");
        const auto rows = profiles.in_context(a.positional[0], c, cal.params);
        auto split = profile::split_holdout(rows, share, static_cast<std::uint64_t>(seed));
        // A hold-out moves whole groups (op type, input shapes and dtypes): one side can end
        // up empty, and a score without a fit would read as a calibrated one.
        if (!rows.empty() && (split.fit.empty() || split.test.empty())) {
            std::set<std::string> groups;
            for (const auto& r : rows) groups.insert(profile::group_key(r));
            throw perfcast::error(
                a.positional[0] + ": --holdout " + *a.get("holdout") + ", seed " +
                std::to_string(seed) + " puts " +
                (split.fit.empty() ? "every row on the held-out side, none to fit on"
                                   : "no row on the held-out side, none to score") +
                " (a hold-out moves whole groups of one op type, shapes and dtypes: " +
                std::to_string(rows.size()) + " rows in " + std::to_string(groups.size()) +
                (groups.size() == 1 ? " group" : " groups") + "); " +
                (split.fit.empty() ? "give a smaller share, or a profile of more ops"
                                   : "give a larger share"));
        }
        fit_rows = std::move(split.fit);
        test_rows = filtered(split.test, keep);
        scored_what = "the held-out side of " + a.positional[0] + " (--holdout " +
                      *a.get("holdout") + ", seed " + std::to_string(seed) + ")";
        test_read = split.test.size();
    } else {
        if (a.has("fit")) {
            if (same_file(*a.get("fit"), *a.get("test"))) {
                err << "perfcast validate: warning: --fit and --test name the same file: the "
                       "scores are of rows the fit saw, not predictions (PROFILE --holdout "
                       "SHARE holds rows out)\n";
            }
            fit_rows = profiles.in_context(*a.get("fit"), c, cal.params);
        }
        const auto read = profiles.in_context(*a.get("test"), c, cal.params);
        test_rows = filtered(read, keep);
        scored_what = *a.get("test");
        test_read = read.size();
    }
    if (test_rows.empty()) throw nothing_scored(scored_what, test_read, 0, {}, a);
    std::optional<profile::calibration_result> fit;
    if (!fit_rows.empty()) {
        require_mapped(c, test_rows, cal, scored_what, test_read, a);
        const profile::calibration start = cal;
        fit = profile::calibrate(c, profile::measured_ops(c, fit_rows), cal.params,
                                 calibration_options_from(a, progress));
        cal = fit->fitted;
        warn_if_underdetermined(err, "validate", c, fit_rows, start, fit->rows,
                                "the score is of a fit that may be far off (more fit rows: "
                                "a smaller --holdout share, or a larger --fit profile)");
    }
    std::optional<profile::measured_neighbours> neighbours;
    if (near) neighbours.emplace(c, fit_rows, cal, near_window);
    const auto reference = profile::reference_of(c, fit_rows);
    const auto rep =
        profile::score_rows(c, test_rows, cal, profile::all_rows,
                            neighbours ? &*neighbours : nullptr, fit ? &reference : nullptr);
    if (rep.overall.rows == 0)
        throw nothing_scored(scored_what, test_read, test_rows.size(), rep.unmapped, a);
    write_report(out, rep, {worst, format, near, by_kind, a.has("unmapped"), profiles.damaged()},
                 fit ? &*fit : nullptr);
    return exit_ok;
}

std::string calibrate_usage() {
    return "Usage: perfcast calibrate PROFILE.csv [--chip C] -o FILE\n"
           "       perfcast calibrate --deployments ROWS.csv --knobs LIST -o FILE\n"
           "         (measured deployments: 'perfcast calibrate --deployments F --help')\n\n"
           "Fit the model's parameters (per-engine head costs, the first-run cost, efficiencies,\n"
           "a work factor and a fixed time or a time per core held per op type) to the\n"
           "profile's rows, minimising the mean absolute log error; rows with start times\n"
           "carry their sequence context (L2 share of the inputs, write-back, first runs:\n"
           "docs/model.md). PROFILE.csv may also be an SQLite export (msprof_*.db,\n"
           "ascend_pytorch_profiler*.db), a profiler's output folder or - for standard input.\n"
           "Write them to FILE, which every command reads back with --params\n"
           "FILE. Without --chip / --chip-ini, the chip is the one the profile names, as for\n"
           "validate.\n\n" +
           options_text(validate_detail::calibrate_options);
}

int run_calibrate(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
    using namespace validate_detail;
    if (wants_deployments(args)) return run_calibrate_deployments(args, out, err);
    // -o is the short spelling of --output.
    std::vector<std::string_view> words(args.begin(), args.end());
    for (auto& w : words)
        if (w == "-o") w = "--output";
    const parsed_args a = parse_args(words, calibrate_options);
    if (a.has("help")) {
        out << calibrate_usage();
        return exit_ok;
    }
    if (a.positional.size() != 1) throw usage_error("needs exactly one PROFILE.csv");
    if (!a.has("output")) throw usage_error("needs -o FILE");
    const io::output_file target = *output_from_args(a, "output");
    refuse_output_over_input(target, a.positional[0]);
    profile_rows profiles(a, err);
    const chip c = profiles.chip_for(a.positional[0]);
    const profile::calibration start = params_from_args(a);
    warn_params_chip(a, start, c, err, "the fit's start", false);
    note_type_terms_unused(a, start, err,
                           "fit starts from the file's shared parameters and fits per-type terms "
                           "anew from these rows");
    const row_filter keep{list_of(a, "tasks"), {}};
    const auto read = profiles.in_context(a.positional[0], c, start.params);
    const auto rows = filtered(read, keep);
    require_mapped(c, rows, start, a.positional[0], read.size(), a,
                   "nothing to fit (a calibration needs rows the model maps to ops)");
    const auto res =
        profile::calibrate(c, profile::measured_ops(c, rows), start.params,
                           calibration_options_from(a, progress_from_args(a, err, "calibrate")));
    // Said, not refused: the file still reproduces these rows.
    warn_if_underdetermined(err, "calibrate", c, rows, start, res.rows,
                            "the file may be far off for other ops (check it: perfcast validate "
                            "--params FILE --test ANOTHER.csv)");
    io::write_output(target, [&](std::ostream& f) {
        io::write_params(f, res.fitted,
                         "fitted on " + std::to_string(res.rows) + " rows of " + a.positional[0] +
                             " for " + std::string(c.name.view()));
    });
    out << fit_summary(res) << "; wrote " << *a.get("output") << '\n';
    return exit_ok;
}

}  // namespace perfcast::cli
