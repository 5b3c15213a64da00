// examples/perfcast/common.hpp: flags several subcommands share: the chip (--chip, --chip-ini)
// and the model parameters (--params).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <perfcast/card.hpp>
#include <perfcast/chips.hpp>
#include <perfcast/device_memory.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/ini.hpp>
#include <perfcast/io/output_file.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/profile/device_info.hpp>
#include <perfcast/profile/discover.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/msprof_db.hpp>
#include <perfcast/profile/ops.hpp>
#include <perfcast/runtime.hpp>

#include "cli.hpp"
#include "sqlite_source.hpp"

namespace perfcast::cli {

inline constexpr option chip_option{"chip", "C", "chip preset (see 'perfcast chips')"};
inline constexpr option chip_ini_option{
    "chip-ini", "FILE", "CANN platform_config .ini of the installed chip (--chip: its base)"};
inline constexpr option params_option{"params", "FILE",
                                      "model parameters from 'perfcast calibrate -o FILE'"};

/// The chip from --chip-ini FILE (base: --chip, or the default for the file's core family) or
/// --chip C; `fallback` when neither is given (empty: an error).
[[nodiscard]] inline chip chip_from_args(const parsed_args& a, std::string_view fallback = {}) {
    const auto preset = a.get("chip");
    std::optional<chip> base;
    if (preset) {
        try {
            base = chips::get_chip(*preset);  // an unknown name lists the known ones
        } catch (const perfcast::error& e) {
            throw usage_error("option '--chip': " + std::string(e.what()));
        }
    }
    if (const auto ini = a.get("chip-ini")) {
        if (base && base->aicpu.cores < 1) {  // io::platform_from_ini's check, as a usage error
            throw usage_error("option '--chip': " + *preset + " is no base for --chip-ini " + *ini +
                              ": a CANN platform_config describes an Ascend chip, so " +
                              "its base is an Ascend preset (or none: the default for the " +
                              "file's AIC_version)");
        }
        return base ? io::chip_from_ini(*ini, *base) : io::chip_from_ini(*ini);
    }
    if (base) return *base;
    if (fallback.empty()) throw usage_error("needs --chip C or --chip-ini FILE");
    return chips::get_chip(fallback);
}

inline constexpr option runtime_option{
    "runtime", "NAME", "runtime path around the kernels: none, acl or cuda (docs/runtime.md); "
                       "default: the model file's runtime line, else none"};
inline constexpr option runtime_set_option{
    "runtime-set", "K=V[,K=V..]",
    "runtime-path settings over the preset, after the model's and --params' (docs/runtime.md)"};
inline constexpr option host_threads_option{
    "host-threads", "N", "host threads dispatching for the card (0: one per instance; default 0)"};
inline constexpr option chips_per_card_option{
    "chips-per-card", "N",
    "chips on the card, sharing its host link and host threads (an Atlas 300I Duo: 2); --streams "
    "counts the card's instances, spread over its chips; default 1"};

/// "k=v,k=v" of --runtime-set as settings whose origin names the flag.
[[nodiscard]] inline std::vector<runtime_setting> runtime_settings_from_flag(std::string_view text) {
    std::vector<runtime_setting> out;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t comma = text.find(',', pos);
        const std::string_view part =
            text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        const std::size_t eq = part.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
            throw usage_error("option '--runtime-set': '" + std::string(part) +
                              "' is not KEY=VALUE (keys: " + runtime_key_names() + ")");
        }
        if (sets_key(out, part.substr(0, eq))) {
            throw usage_error("option '--runtime-set': " + std::string(part.substr(0, eq)) +
                              " is given twice (each key at most once)");
        }
        out.push_back({std::string(part.substr(0, eq)), std::string(part.substr(eq + 1)),
                       "option '--runtime-set'"});
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

/// The runtime preset: --runtime (one of the presets, else a usage error), else the model's, else
/// none (graph.hpp runtime_preset_of).
[[nodiscard]] inline std::string runtime_preset_from_args(const parsed_args& a, const model& m) {
    if (const auto flag = a.get("runtime")) {
        if (!parse_in(runtime_preset_names, *flag)) {
            throw usage_error("option '--runtime': '" + *flag + "' is not one of " +
                              choices_of(runtime_preset_names));
        }
    }
    return runtime_preset_of(&m, a.get("runtime").value_or(""));
}

/// Warns on `err` of a runtime preset of the other vendor's stack: acl (CANN's) on a GPU preset
/// (a chip with no AI CPU), cuda on an Ascend one: its step times are that stack's. `where`
/// prefixes the warning (a row's origin), if any.
inline void warn_runtime_vendor(const chip& c, std::string_view preset, std::ostream& err,
                                std::string_view where = {}) {
    const bool ascend = c.aicpu.cores > 0;
    if (!((preset == "acl" && !ascend) || (preset == "cuda" && ascend))) return;
    err << "perfcast: warning: " << where << (where.empty() ? "" : ": ") << "runtime " << preset
        << " is " << (ascend ? "CUDA's" : "CANN's (Ascend)") << " host path, and " << c.name.view()
        << " is " << (ascend ? "an Ascend chip" : "a GPU")
        << ": its step times are the other stack's (--runtime " << (ascend ? "acl" : "cuda")
        << " models this chip's)\n";
}

/// The runtime path: --runtime (else the model's preset, else none), then the model's settings,
/// --params' runtime.* settings and --runtime-set, in that order (runtime.hpp resolve_runtime).
[[nodiscard]] inline std::optional<runtime_path> runtime_from_args(const parsed_args& a,
                                                                   const model& m,
                                                                   const profile::calibration& cal) {
    const std::string preset = runtime_preset_from_args(a, m);
    std::vector<runtime_setting> flags;
    if (const auto t = a.get("runtime-set")) flags = runtime_settings_from_flag(*t);
    static const std::vector<runtime_setting> none;
    const std::vector<runtime_setting>& from_model = m.runtime ? m.runtime->settings : none;
    // Copy settings for a model that copies nothing (a model file's runtime line is refused
    // where the file is read; a deployments row's options where the rows are).
    if (std::none_of(m.nodes.begin(), m.nodes.end(),
                     [](const node& n) { return n.is_transfer(); })) {
        for (const runtime_setting& s : flags) {
            if (is_copy_setting(s.key)) {
                throw usage_error("option '--runtime-set': " + s.key + "=" + s.value +
                                  " sets how copies are made, but '" + m.name +
                                  "' has no input or output transfer to copy (a model file "
                                  "declares them with transfer lines: docs/model-file.md)");
            }
        }
    }
    return resolve_runtime(preset, {from_model, cal.runtime, flags});
}

inline constexpr option shared_weights_option{
    "shared-weights", "",
    "the instances on a card share one copy of the weights and tables (default: a copy each; "
    "docs/whatif-serving.md, \"Device memory\")"};
inline constexpr option instance_memory_option{
    "instance-memory", "SIZE",
    "device memory each instance holds besides its tensors (runtime context, workspace), "
    "e.g. 300MiB; default 0B"};

/// --shared-weights and --instance-memory SIZE: how instances hold the card's memory.
[[nodiscard]] inline memory_rule memory_rule_from_args(const parsed_args& a) {
    memory_rule r;
    if (a.has("shared-weights")) r.copies = weight_copies::shared;
    if (const auto t = a.get("instance-memory")) {
        try {
            r.reserve = io::parse_size(*t, "--instance-memory");
        } catch (const error& e) {
            throw usage_error(e.what());  // a flag's value: the command line is wrong
        }
    }
    return r;
}

/// --host-threads N (0: one per instance).
[[nodiscard]] inline int host_threads_from_args(const parsed_args& a) {
    const auto t = a.get("host-threads");
    if (!t) return 0;
    int v = -1;
    const auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (t->empty() || ec != std::errc{} || p != t->data() + t->size() || v < 0 || v > 4096) {
        throw usage_error("option '--host-threads': '" + *t +
                          "' is not a thread count in [0, 4096] (0: one per instance)");
    }
    return v;
}

/// --chips-per-card N (1 to max_card_chips).
[[nodiscard]] inline int chips_per_card_from_args(const parsed_args& a) {
    const auto t = a.get("chips-per-card");
    if (!t) return 1;
    int v = 0;
    const auto [p, ec] = std::from_chars(t->data(), t->data() + t->size(), v);
    if (t->empty() || ec != std::errc{} || p != t->data() + t->size() || v < 1 ||
        v > max_card_chips) {
        throw usage_error("option '--chips-per-card': '" + ::perfcast::parse_error::printable(*t) +
                          "' is not a chip count in [1, " + std::to_string(max_card_chips) +
                          "] (2 for an Atlas 300I Duo)");
    }
    return v;
}

/// The output file of flag `name` ("svg" for --svg; "output" is shown as -o), checked now,
/// before any work, so that a bad path fails in a second rather than after the computation
/// (io/output_file.hpp). -o refuses a symbolic link: a params file is read back later.
[[nodiscard]] inline std::optional<io::output_file> output_from_args(const parsed_args& a,
                                                                     std::string_view name) {
    const auto path = a.get(name);
    if (!path) return std::nullopt;
    static constexpr std::string_view o_flag = "-o";
    io::output_file f{*path, o_flag, io::symlinks::refuse};
    if (name == "svg") f = {*path, "--svg", io::symlinks::follow};
    if (name == "trace") f = {*path, "--trace", io::symlinks::follow};
    // '-' names standard input where a profile goes; as an output it once made a file named -.
    if (*path == "-")
        throw usage_error("option '" + std::string(f.flag) +
                          "': '-' is not a file to write (standard output is /dev/stdout)");
    io::check_output(f);
    return f;
}

/// Whether paths `a` and `b` name one existing file (a link or another spelling of it too);
/// false when either does not exist or cannot be looked at.
[[nodiscard]] inline bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec;
    return std::filesystem::equivalent(a, b, ec) && !ec;
}

/// Refuses an output that is the data file `input` the command reads (a profile, an ONNX graph,
/// a deployments file): `import m.onnx -o m.onnx` would replace the graph by its import.
inline void refuse_output_over_input(const io::output_file& out, const std::string& input) {
    if (same_file(out.path, input)) {
        throw usage_error(std::string(out.flag) + " " + out.path + " is the input file '" + input +
                          "': writing it would replace what the command reads; " +
                          "choose another output file");
    }
}

/// Refuses two outputs of one command in one file (`--trace x --svg x`: the second written
/// would silently replace the first): the same path, another spelling of it ("./x", "d/../x"),
/// or a link to it.
inline void refuse_outputs_in_one_file(const io::output_file& first,
                                       const io::output_file& second) {
    std::error_code e1;
    std::error_code e2;
    const std::filesystem::path p1 = std::filesystem::weakly_canonical(first.path, e1);
    const std::filesystem::path p2 = std::filesystem::weakly_canonical(second.path, e2);
    if (first.path == second.path || same_file(first.path, second.path) ||
        (!e1 && !e2 && p1 == p2)) {
        throw usage_error(std::string(first.flag) + " " + first.path + " and " +
                          std::string(second.flag) + " " + second.path +
                          " name one file: the second written would replace the first; choose "
                          "two output files");
    }
}

inline constexpr option strict_option{
    "strict", "", "a damaged profile row is an error (default: skipped, listed on stderr)"};
inline constexpr option device_option{
    "device", "N", "rows of this Device_id only (needed when the profile has several)"};
inline constexpr option step_option{
    "step", "N", "rows of this Step Id only (a torch_npu kernel_details of several steps)"};
inline constexpr option rank_option{
    "rank", "N", "with a folder of several ranks' output: this rank's (profiler_info_N.json)"};

/// The value of `--NAME`, a non-negative integer id (a Device_id, a Step Id), if given.
[[nodiscard]] inline std::optional<int> id_option(const parsed_args& a, std::string_view name,
                                                  std::string_view what, std::string_view column) {
    const auto text = a.get(name);
    if (!text) return std::nullopt;
    int v = -1;
    const auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (text->empty() || ec != std::errc{} || p != text->data() + text->size() || v < 0) {
        throw usage_error("option '--" + std::string(name) + "': '" + *text + "' is not a " +
                          std::string(what) + " (a non-negative integer, the " +
                          std::string(column) + " column)");
    }
    return v;
}

/// How to read a profile: --strict, --device N and --step N.
[[nodiscard]] inline profile::kernel_reader_options profile_options_from_args(
    const parsed_args& a) {
    profile::kernel_reader_options o;
    o.strict = a.has("strict");
    o.device = id_option(a, "device", "device id", "Device_id");
    o.step = id_option(a, "step", "step id", "Step Id");
    return o;
}

/// A profile whose every row was damaged, or that has none, gives no answer: an error, not a
/// report of zeros ("Findings (0) none" read as a clean bill of health).
inline void require_usable_rows(const std::string& source, std::size_t rows, std::size_t skipped) {
    if (rows == 0 && skipped > 0) {
        throw perfcast::error(source + ": no usable row: all " + std::to_string(skipped) +
                              " rows were damaged and skipped (listed above)");
    }
    if (rows == 0) throw perfcast::error(source + ": holds no row (a header and nothing else)");
}

/// Damaged rows or events listed one per line on stderr; the rest are counted (the JSON lists
/// up to 1000).
inline constexpr std::size_t max_warned = 20;

/// One warning line per listed skipped item on `err` ("skipped KIND: " and what `describe`
/// makes of it), the first max_warned of them, and a count of the rest ("N more PLURAL skipped
/// (C in all[TAIL])").
template <class Item, class Describe>
void warn_skipped_items(std::ostream& err, const std::string& source,
                        const std::vector<Item>& listed, std::size_t count, std::string_view kind,
                        std::string_view plural, std::string_view tail, Describe describe) {
    const std::size_t shown = std::min(listed.size(), max_warned);
    for (std::size_t i = 0; i < shown; ++i) {
        err << "perfcast: warning: skipped " << kind << ": " << describe(listed[i]) << '\n';
    }
    if (count > shown) {
        err << "perfcast: warning: " << source << ": " << count - shown << " more " << plural
            << " skipped (" << count << " in all" << tail << ")\n";
    }
}

/// One warning line per skipped profile row on `err`, and a count of those not listed.
inline void warn_skipped(std::ostream& err, const std::string& source,
                         const std::vector<profile::skipped_row>& listed, std::size_t count) {
    warn_skipped_items(err, source, listed, count, "row", "damaged rows",
                       "; --strict makes the first an error",
                       [](const profile::skipped_row& r) { return profile::describe(r); });
}

/// The op tables that PROFILE names: the file itself, or those found in a folder (--rank picks
/// among ranks, --device among msprof devices); never empty (none: an error saying what the walk
/// looked at).
[[nodiscard]] inline std::vector<profile::profile_source> sources_from_args(
    const parsed_args& a, const std::string& path) {
    const profile::discovery d = profile::discover_profiles(path);
    std::vector<profile::profile_source> left = d.sources;
    // --rank keeps the tables of that rank; --device drops those of another device folder
    // (a table without one may hold that device's rows: its Device_id column decides).
    const auto pick = [&left](std::string_view flag, auto member, int want, bool need_value) {
        std::erase_if(left, [&](const profile::profile_source& s) {
            return (s.*member).has_value() ? *(s.*member) != want : need_value;
        });
        if (left.empty()) {
            throw usage_error("option '--" + std::string(flag) + "': no op table of " +
                              std::string(flag) + " " + std::to_string(want) + " there");
        }
    };
    if (const auto r = a.get("rank")) {
        const auto v = io::parse_int(*r, "--rank");
        if (v < 0 || v > 1000000) throw usage_error("option '--rank': '" + *r + "' is not a rank");
        pick("rank", &profile::profile_source::rank, static_cast<int>(v), true);
    }
    if (const auto dv = a.get("device"); dv && left.size() > 1) {
        pick("device", &profile::profile_source::device, *profile_options_from_args(a).device,
             false);
    }
    if (left.empty()) {
        std::string why;
        for (const auto& n : d.not_taken) why += "\n  " + n.path.generic_string() + ": " + n.reason;
        throw perfcast::error(
            "no op table (kernel_details.csv, op_summary_*.csv, msprof_*.db or "
            "ascend_pytorch_profiler*.db) in '" +
            path + "'" + (why.empty() ? std::string() : "; looked at:" + why));
    }
    return left;
}

/// "TOOL, rank R, device D": what a table is, for lists and side-by-side tables.
[[nodiscard]] inline std::string source_label(const profile::profile_source& s) {
    std::string label = s.tool;
    if (s.rank) label += ", rank " + std::to_string(*s.rank);
    if (s.device) label += ", device " + std::to_string(*s.device);
    return label;
}

/// What reading `s` from a folder found, and why, on `err` (nothing for a file named itself).
inline void say_reading(const profile::profile_source& s, std::ostream& err) {
    if (s.tool != "file")
        err << "perfcast: reading " << s.name() << " (" << s.tool << ": " << s.evidence << ")\n";
}

/// The one op table that PROFILE names (sources_from_args). Several left: an error listing them.
/// For a folder, what was found and why is printed on `err`.
[[nodiscard]] inline profile::profile_source source_from_args(const parsed_args& a,
                                                              const std::string& path,
                                                              std::ostream& err,
                                                              std::string_view several_hint = "") {
    const std::vector<profile::profile_source> left = sources_from_args(a, path);
    if (left.size() > 1) {
        std::string list;
        for (const auto& s : left) list += "\n  " + s.name() + " (" + source_label(s) + ")";
        throw perfcast::error("'" + path + "' holds " + std::to_string(left.size()) +
                              " op tables; pick one with --rank N or --device N" +
                              std::string(several_hint) + ", or name its file:" + list);
    }
    say_reading(left.front(), err);
    return left.front();
}

/// The Device_ids of `rows`, in first-seen order.
[[nodiscard]] inline std::vector<int> devices_of(const std::vector<profile::kernel_row>& rows) {
    std::vector<int> out;
    for (const auto& r : rows) {
        if (r.device && std::find(out.begin(), out.end(), *r.device) == out.end())
            out.push_back(*r.device);
    }
    return out;
}

/// The op rows of an SQLite export (through sqlite_source.hpp: an error naming libsqlite3-dev in
/// a build without SQLite), with what the database says about the chip and what it lacks on
/// `err`.
[[nodiscard]] inline profile::msprof_db_table read_database(const profile::profile_source& s,
                                                            const profile::kernel_reader_options& o,
                                                            std::ostream& err) {
    const std::string path = s.files.front().generic_string();
    const std::unique_ptr<profile::db_row_source> db = open_sqlite(path);
    profile::msprof_db_table t = profile::read_msprof_db(*db, o);
    const profile::chip_evidence e = profile::db_chip_evidence(t.info, devices_of(t.table.rows));
    if (!e.text.empty()) err << "perfcast: " << path << ": " << e.text << '\n';
    if (!t.info.has_pmu) {
        err << "perfcast: note: " << path << ": no TASK_PMU_INFO (collected without "
            << "--aic-metrics): no cycle counts or pipe ratios\n";
    }
    if (!t.info.absent_columns.empty()) {
        std::string list;
        for (const auto& c : t.info.absent_columns) list += (list.empty() ? "" : ", ") + c;
        err << "perfcast: note: " << path << ": columns absent, read as not recorded: " << list
            << '\n';
    }
    return t;
}

/// The chip for a profile read from a database: --chip / --chip-ini when given (with a note when
/// the database's AI core clock differs from it), else the preset the database names, when it
/// names exactly one ('Ascend910B' does not say which 910B: then a usage error saying so).
[[nodiscard]] inline chip chip_for_database(const parsed_args& a, const profile::msprof_db_table& t,
                                            std::ostream& err) {
    if (a.has("chip") || a.has("chip-ini")) {
        const chip c = chip_from_args(a);
        for (const auto& s : t.info.aicore_clock) {
            const double mhz = s.clock.in(units::MHz);
            if (std::abs(mhz - c.cube.clock.in(units::MHz)) > 0.5) {
                err << "perfcast: note: the database's AI core clock (AICORE_FREQ) was "
                    << io::format_shortest(mhz) << " MHz; chip " << c.name.view() << " runs at "
                    << io::format_shortest(c.cube.clock.in(units::MHz)) << " MHz\n";
                break;
            }
        }
        return c;
    }
    const profile::chip_evidence e = profile::db_chip_evidence(t.info, devices_of(t.table.rows));
    if (e.preset != nullptr) {
        err << "perfcast: chip " << e.preset->name << " as the database names it (--chip "
            << "overrides)\n";
        return e.preset->spec;
    }
    throw usage_error("needs --chip C or --chip-ini FILE: " +
                      (e.why_no_preset.empty()
                           ? std::string("the database names no chip (no NPU_INFO)")
                           : e.why_no_preset));
}

/// The chip for CSV rows read without --chip / --chip-ini: the one preset whose cube cores x
/// clock the rows' own cube_utilization(%) column gives (rows_chip_evidence), said on `err`;
/// otherwise a usage error saying what the column gave.
[[nodiscard]] inline chip chip_for_rows(std::span<const profile::kernel_row> rows,
                                        const std::string& source, std::ostream& err) {
    const profile::chip_evidence e = profile::rows_chip_evidence(rows);
    if (e.preset != nullptr) {
        err << "perfcast: " << source << ": " << e.text << "; chip " << e.preset->name
            << " (--chip overrides)\n";
        return e.preset->spec;
    }
    throw usage_error("needs --chip C or --chip-ini FILE: " +
                      (e.why_no_preset.empty()
                           ? std::string("no row has the cycles and cube_utilization(%) that "
                                         "would tell the chip (at least 1 % over 10 us)")
                           : e.why_no_preset));
}

/// Notes on `err` a chip the user gave (--chip, --chip-ini) that the rows of `source` say did
/// not run them (profile::chip_mismatch: the cube cores x clock their cube_utilization(%) column
/// gives); a chip chosen from the profile's own data is its own, and is not judged.
inline void note_rows_chip(const parsed_args& a, const chip& c,
                           std::span<const profile::kernel_row> rows, const std::string& source,
                           std::ostream& err) {
    if (!a.has("chip") && !a.has("chip-ini")) return;
    const std::string note = profile::chip_mismatch(c, profile::rows_chip_evidence(rows));
    if (!note.empty()) err << "perfcast: note: " << source << ": " << note << '\n';
}

/// One warning per row of `rows` (read from `source`) whose Block Dim the model has to assume on
/// `c` (profile::block_dim_problem: none, 0, or above 65535 on the cube or vector cores, priced
/// on all the engine's cores), the first max_warned of them, and a count of the rest; one line
/// when no such row records a Block Dim at all (a file without the column).
inline void warn_block_dims(const chip& c, std::span<const profile::kernel_row> rows,
                            const std::string& source, std::ostream& err) {
    std::size_t on_cores = 0;
    std::size_t unrecorded = 0;
    std::vector<std::pair<const profile::kernel_row*, std::string>> flagged;
    for (const profile::kernel_row& r : rows) {
        if (!profile::runs_on_ai_cores(r.task)) continue;
        ++on_cores;
        if (!r.block_dim) ++unrecorded;
        if (std::string p = profile::block_dim_problem(c, r); !p.empty())
            flagged.emplace_back(&r, std::move(p));
    }
    if (flagged.empty()) return;
    if (unrecorded == on_cores) {
        err << "perfcast: warning: " << source << ": none of its " << on_cores
            << " rows on the cube or vector cores records a Block Dim: each is priced on all of "
               "its engine's cores\n";
        return;
    }
    const std::size_t shown = std::min(flagged.size(), max_warned);
    for (std::size_t i = 0; i < shown; ++i) {
        const profile::kernel_row& r = *flagged[i].first;
        err << "perfcast: warning: " << source << ":" << r.line << ": "
            << parse_error::printable(r.name) << " (" << parse_error::printable(r.op_type)
            << "): " << flagged[i].second << '\n';
    }
    if (flagged.size() > shown) {
        err << "perfcast: warning: " << source << ": " << flagged.size() - shown
            << " more rows whose Block Dim is missing, 0 or above " << profile::max_block_dim
            << ", each priced on all of its engine's cores (" << flagged.size() << " in all)\n";
    }
}

/// The chip msprof's device info file names (PROF_*/device_<N>/info.json.<N>, found beside the
/// table by discover_profiles): the one preset with its ai_core_num cube cores at its
/// aic_frequency (profile/device_info.hpp), said on `err` as the rows' evidence is. Nothing when
/// the source has no such file, or when it names no one preset or cannot be read (a note on `err`
/// says why; the caller then asks the rows).
[[nodiscard]] inline std::optional<chip> chip_for_device_info(const profile::profile_source& s,
                                                              std::ostream& err) {
    if (!s.device_info) return std::nullopt;
    const std::string path = s.device_info->generic_string();
    profile::chip_evidence e;
    try {
        e = profile::info_chip_evidence(profile::read_device_info_file(path));
    } catch (const parse_error& x) {
        err << "perfcast: note: " << x.what() << " (not used to choose the chip)\n";
        return std::nullopt;
    }
    if (e.preset != nullptr) {
        err << "perfcast: " << path << ": " << e.text << "; chip " << e.preset->name
            << " (--chip overrides)\n";
        return e.preset->spec;
    }
    err << "perfcast: note: " << e.why_no_preset << '\n';
    return std::nullopt;
}

/// The chip a profile's own data names, asked in this order: a database's NPU_INFO (`db`:
/// chip_for_database, where --chip / --chip-ini win), else msprof's device info file beside the
/// source (`s`: chip_for_device_info, the profiler's own statement), else the rows'
/// cube_utilization(%) column (chip_for_rows on `rows()`, called only then: a caller that would
/// stream the rows reads them only when they are asked). Each answer is said on `err`; a
/// usage_error says what is missing when none names one. read_profile_rows and `perfcast report`
/// (report_of) both choose through it.
template <class Rows>
[[nodiscard]] chip chip_named_by_profile(const parsed_args& a, const profile::profile_source* s,
                                         const profile::msprof_db_table* db,
                                         const std::string& source, std::ostream& err,
                                         Rows&& rows) {
    if (db != nullptr) return chip_for_database(a, *db, err);
    if (s != nullptr) {
        if (auto c = chip_for_device_info(*s, err)) return *c;
    }
    return chip_for_rows(rows(), source, err);
}

/// The chip a profile's own data names (read_profile_rows), or why it names none.
struct chip_told {
    std::optional<chip> c;
    std::string why_not;  // the usage message chip_named_by_profile gave
};

/// The rows of the profile PROFILE names (a file, a folder, or - for standard input), read as
/// --strict and --device say; skipped rows are listed on `err`. With `told`: also the chip the
/// profile's own data names (chip_named_by_profile), for a command run without --chip /
/// --chip-ini; when it names none, `told->why_not` says what is missing.
[[nodiscard]] inline profile::kernel_table read_profile_rows(const parsed_args& a,
                                                             const std::string& path,
                                                             std::ostream& err,
                                                             chip_told* told = nullptr) {
    profile::kernel_table t;
    std::optional<profile::profile_source> s;
    std::optional<profile::msprof_db_table> db;
    if (path == "-") {
        t = profile::read_kernel_details(std::cin, "<stdin>", profile_options_from_args(a));
    } else {
        s = source_from_args(a, path, err);
        if (s->format == profile::source_format::sqlite) {
            db = read_database(*s, profile_options_from_args(a), err);
        } else {
            t = profile::read_profile_source(*s, profile_options_from_args(a));
        }
    }
    // Skipped rows are listed before the rows are asked for the chip, and a table of damaged
    // rows is an error then, not a chip question.
    bool checked = false;
    const auto check = [&] {
        if (db) t = std::move(db->table);
        warn_skipped(err, path, t.skipped, t.skipped_count);
        require_usable_rows(path, t.rows.size(), t.skipped_count);
        checked = true;
    };
    if (told != nullptr) {
        const auto rows = [&]() -> std::span<const profile::kernel_row> {
            check();
            return t.rows;
        };
        try {
            told->c =
                chip_named_by_profile(a, s ? &*s : nullptr, db ? &*db : nullptr, path, err, rows);
        } catch (const usage_error& e) {
            told->why_not = e.what();
        }
    }
    if (!checked) check();
    return t;
}

/// The calibration from --params FILE, or the defaults.
[[nodiscard]] inline profile::calibration params_from_args(const parsed_args& a) {
    if (const auto f = a.get("params")) return io::read_params_file(*f);
    return {};
}

/// Whether chip names `a` and `b` are the same chip: the same preset by any of its spellings
/// (chips::find_preset: "910B1", an ini's "Ascend910B1", "ascend910b1"), else the same name with
/// ASCII case ignored.
[[nodiscard]] inline bool same_chip_name(std::string_view a, std::string_view b) {
    const chips::named_chip* pa = chips::find_preset(a);
    const chips::named_chip* pb = chips::find_preset(b);
    if (pa != nullptr || pb != nullptr) return pa == pb;
    return io::iequals(a, b);
}

/// Says on `err` when the --params file was fitted for another chip than `c` (its `chip` key).
/// `use`: what the command does with it ("applied whole": its heads and efficiencies are the
/// other chip's; calibrate: "the fit's start").
/// `transfer_advice`: point to validate --transfer-from (the profile modes take it).
inline void warn_params_chip(const parsed_args& a, const profile::calibration& cal, const chip& c,
                             std::ostream& err, std::string_view use = "applied whole",
                             bool transfer_advice = true) {
    if (cal.chip.empty() || same_chip_name(cal.chip, c.name.view())) return;
    err << "perfcast: warning: " << a.value_or("params", "the parameters") << " was fitted for "
        << cal.chip << ", not " << c.name.view() << "; " << use
        << " (its heads and efficiencies are that chip's";
    // Advice only for a chip --transfer-from can name (a preset).
    if (transfer_advice && chips::find_chip(cal.chip)) {
        err << "; validate --transfer-from " << cal.chip
            << " scores what carries to another chip: docs/calibration.md, \"Another chip\"";
    }
    err << ")\n";
}

/// Whether `cal` holds per-type terms for profiler op type `type` (its own, or the unseen
/// heavy factor of a heavy type).
[[nodiscard]] inline bool has_type_terms(const profile::calibration& cal, std::string_view type) {
    return cal.work_factor.contains(type) || cal.fixed_time.contains(type) ||
           cal.per_core_time.contains(type) ||
           (profile::is_heavy_type(type) && cal.unseen_heavy_factor != 1);
}

/// A note on `err` where --params holds per-type terms (work factors, fixed times, times per
/// core: fitted to profiler op types) that the command cannot apply; `why` says why.
inline void note_type_terms_unused(const parsed_args& a, const profile::calibration& cal,
                                   std::ostream& err, std::string_view why) {
    std::set<std::string_view> types;
    for (const auto* m : {&cal.fixed_time, &cal.per_core_time})
        for (const auto& [k, v] : *m) types.insert(k);
    for (const auto& [k, v] : cal.work_factor) types.insert(k);
    if (types.empty() && cal.unseen_heavy_factor == 1) return;
    err << "perfcast: note: " << a.value_or("params", "the parameters") << "'s per-type terms ("
        << types.size() << (types.size() == 1 ? " key" : " keys");
    if (cal.unseen_heavy_factor != 1) err << ", and the factor of heavy types without one";
    err << ") are not applied: the " << why << "\n";
}

/// Every value of list flag `flag` in [1, hi]: "option '--streams': 65 is not a stream count
/// per card in [1, 64]" (whatif's card and serving modes, and --gains).
template <class T>
void check_at_most(std::string_view flag, const std::vector<T>& v, std::int64_t hi,
                   std::string_view what) {
    for (T x : v) {
        if (static_cast<std::int64_t>(x) > hi) {
            throw usage_error("option '--" + std::string(flag) + "': " + std::to_string(x) +
                              " is not " + std::string(what) + " in [1, " + std::to_string(hi) +
                              "]");
        }
    }
}

/// Parses "1-6", "6,8,12,24", "1-3,8" into values >= 1 (in the order given, duplicates removed).
[[nodiscard]] inline std::vector<std::int64_t> parse_list(std::string_view flag,
                                                          std::string_view text) {
    auto bad = [&](std::string_view part, std::string_view why) -> usage_error {
        return usage_error("option '--" + std::string(flag) + "': '" + std::string(part) + "' " +
                           std::string(why) + " (lists look like 1-6, 6,8,12,24 or 1-3,8)");
    };
    auto number = [&](std::string_view part, std::string_view whole) {
        std::int64_t v = 0;
        auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
        if (part.empty() || ec != std::errc{} || p != part.data() + part.size()) {
            if (const auto w = io::whole_in_exponent_form(part)) {
                v = *w;  // 1e5, as the docs write large counts
            } else if (io::past_int64(part)) {
                throw bad(whole, "is too large");
            } else if (double d = 0;
                       std::from_chars(part.data(), part.data() + part.size(), d).ptr ==
                       part.data() + part.size()) {
                throw bad(whole, "is not an integer (write 16, or 1.6e1)");
            } else {
                throw bad(whole, "is not a number or a range");
            }
        }
        if (v < 1) throw bad(whole, "is below 1; every value must be >= 1");
        return v;
    };
    std::vector<std::int64_t> out;
    std::set<std::int64_t> seen;  // not a scan of `out`: 1-100000 would take 5e9 comparisons
    auto add = [&](std::int64_t v) {
        if (seen.insert(v).second) out.push_back(v);
    };
    if (text.empty()) throw bad(text, "is empty");
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = text.find(',', pos);
        const std::string_view part = text.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
        const std::size_t dash = part.find('-', 1);
        if (dash == std::string_view::npos) {
            add(number(part, part));
        } else {
            const std::int64_t lo = number(part.substr(0, dash), part);
            const std::int64_t hi = number(part.substr(dash + 1), part);
            if (hi < lo) throw bad(part, "is a range that runs backwards");
            if (hi - lo > 100000) throw bad(part, "is a range of more than 100000 values");
            for (std::int64_t v = lo; v <= hi; ++v) add(v);
        }
        if (comma == std::string_view::npos) break;
        pos = comma + 1;
    }
    return out;
}

}  // namespace perfcast::cli
