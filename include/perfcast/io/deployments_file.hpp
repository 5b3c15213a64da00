// perfcast/io/deployments_file.hpp: measured deployment rows (docs/runtime.md, "Measured
// deployments"), a CSV with a header:
//
//   chip,model,instances,cube,vector,batch,runtime,options,samples_per_s,latency_ms,p99_ms,label
//   ascend910b1,ctr.model,2,12,24,64,acl,copies=aggregated,30120,4.21,,2 x 12/24 aggregated
//
// Required columns: chip (a preset name), model (a model file, relative to the CSV's folder),
// instances (>= 1), batch (>= 1), and at least one of samples_per_s and latency_ms per row.
// Optional: cube / vector (per-instance core limits; empty: all cores), runtime (a preset,
// runtime.hpp; empty: the model file's, else none), options (runtime settings KEY=VALUE separated
// by spaces), host_threads (0 or empty: one per instance), chips_per_card (empty: 1; the card's
// instances spread over its chips, card.hpp), p99_ms (read and reported, not
// predicted), label (free text). Column names are case-insensitive; an unknown column is an error
// (a typo would otherwise drop a measurement). Blank lines and lines starting with '#' are
// skipped. Every error names the file, line, column and field.
#pragma once

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../chips.hpp"
#include "../deployment.hpp"
#include "histogram.hpp"
#include "model_file.hpp"
#include "parse.hpp"

namespace perfcast::io {

namespace detail {

inline constexpr std::array<std::string_view, 14> deployment_columns{
    "chip",    "model",         "instances",  "cube",   "vector", "batch",        "runtime",
    "options", "samples_per_s", "latency_ms", "p99_ms", "label",  "host_threads", "chips_per_card"};

/// A whole number in [lo, hi].
[[nodiscard]] inline long long parse_whole(const line_source& src, std::string_view where,
                                           const detail::csv_field& f, std::string_view name,
                                           long long lo, long long hi) {
    long long v = 0;
    const std::string& t = f.text;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc{} || p != t.data() + t.size() || v < lo || v > hi) {
        bad_field(src, where, f, name,
                  "a whole number in " + std::to_string(lo) + ".." + std::to_string(hi));
    }
    return v;
}

}  // namespace detail

/// How a row's model path becomes a model: a model file (read_model_file) unless the caller
/// reads more (the command imports an ONNX graph; the headers do not link ONNX).
using model_loader = std::function<model(const std::string& path)>;

/// The default model_loader: the model file at `path`; an ONNX graph (.onnx in any case) is
/// refused with the way round (import it first), not read as text.
[[nodiscard]] inline model read_model_or_refuse_onnx(const std::string& path) {
    if (has_extension(path, ".onnx")) {
        throw error(path + ": an ONNX graph; the library reads model files (import it first: " +
                    "perfcast import " + path + " -o MODEL, or read the rows with the command)");
    }
    return read_model_file(path);
}

/// Reads measured deployment rows from `in`; model paths are relative to `base_dir`, each read
/// once by `load`.
[[nodiscard]] inline std::vector<deployment_case> read_deployments(
    std::istream& in, const std::string& source, const std::filesystem::path& base_dir,
    const model_loader& load = read_model_or_refuse_onnx) {
    using namespace detail;
    constexpr std::string_view where = "read_deployments";
    line_source src(in, source, where, max_line_bytes);
    std::vector<detail::csv_field> header;
    read_header(src, where, "chip,model,instances,batch,...", header);
    const std::size_t header_line = src.number();
    std::map<std::string_view, std::size_t> col;
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string n = lower(header[i].text);
        bool known = false;
        for (std::string_view k : deployment_columns) {
            if (n != k) continue;
            known = true;
            if (col.contains(k)) {
                throw parse_error(where, source, header_line, header[i].column,
                                  "column named twice", header[i].text);
            }
            col[k] = i;
        }
        if (!known) {
            std::string names;
            for (std::string_view k : deployment_columns) {
                if (!names.empty()) names += ", ";
                names += k;
            }
            throw parse_error(where, source, header_line, header[i].column,
                              "unknown column (known: " + names + ")", header[i].text);
        }
    }
    for (std::string_view need : {"chip", "model", "instances", "batch"}) {
        if (!col.contains(need)) missing_column(src, where, header_line, need, header);
    }
    if (!col.contains("samples_per_s") && !col.contains("latency_ms")) {
        missing_column(src, where, header_line, "samples_per_s or latency_ms", header);
    }
    auto field = [&](const std::vector<detail::csv_field>& row,
                     std::string_view name) -> const detail::csv_field* {
        const auto it = col.find(name);
        return it == col.end() ? nullptr : &row[it->second];
    };

    std::map<std::string, std::shared_ptr<const model>> models;
    std::vector<deployment_case> out;
    std::vector<detail::csv_field> row;
    std::string_view line;
    while (src.next(line)) {
        if (skippable(line)) continue;
        split_fields(src, where, line, row);
        check_width(src, where, line, row, header.size());
        deployment_case d;
        d.origin = source + ":" + std::to_string(src.number());

        const detail::csv_field& chip_f = *field(row, "chip");
        try {
            d.c = chips::get_chip(chip_f.text);
        } catch (const error& e) {
            throw parse_error(where, source, src.number(), chip_f.column,
                              "chip: " + std::string(e.what()), chip_f.text);
        }
        const detail::csv_field& model_f = *field(row, "model");
        if (model_f.text.empty()) bad_field(src, where, model_f, "model", "a model file path");
        const std::filesystem::path mp = base_dir / model_f.text;
        auto& slot = models[mp.string()];
        if (!slot) {
            std::error_code ec;
            if (!std::filesystem::is_regular_file(mp, ec)) {
                throw parse_error(where, source, src.number(), model_f.column,
                                  "model: no such file (" + mp.string() +
                                      "; paths are relative to the rows file's folder)",
                                  model_f.text);
            }
            try {
                slot = std::make_shared<const model>(load(mp.string()));
            } catch (const error& e) {
                throw parse_error(where, source, src.number(), model_f.column,
                                  "model: " + std::string(e.what()), model_f.text);
            }
        }
        d.m = slot;
        d.instances = stream_count{static_cast<int>(
            parse_whole(src, where, *field(row, "instances"), "instances", 1, 1024))};
        d.batch =
            batch_size{parse_whole(src, where, *field(row, "batch"), "batch", 1, max_batch_size)};
        d.split = all_cores(d.c);
        if (const detail::csv_field* f = field(row, "cube"); f && !f->text.empty()) {
            d.split.cube = core_count{static_cast<int>(
                parse_whole(src, where, *f, "cube", 1, d.c.cube.cores))};
        }
        if (const detail::csv_field* f = field(row, "vector"); f && !f->text.empty()) {
            d.split.vector = core_count{static_cast<int>(
                parse_whole(src, where, *f, "vector", 1, d.c.vector.cores))};
        }
        if (const detail::csv_field* f = field(row, "host_threads"); f && !f->text.empty()) {
            d.host_threads = static_cast<int>(parse_whole(src, where, *f, "host_threads", 0, 4096));
        }
        if (const detail::csv_field* f = field(row, "chips_per_card"); f && !f->text.empty()) {
            d.chips =
                static_cast<int>(parse_whole(src, where, *f, "chips_per_card", 1, max_card_chips));
        }
        if (const detail::csv_field* f = field(row, "runtime"); f && !f->text.empty()) {
            if (!parse_in(runtime_preset_names, f->text)) {
                bad_field(src, where, *f, "runtime", choices_of(runtime_preset_names));
            }
            d.runtime = f->text;
        }
        if (const detail::csv_field* f = field(row, "options"); f && !f->text.empty()) {
            std::string_view rest = f->text;
            std::size_t offset = 0;
            runtime_path scratch;
            while (!rest.empty()) {
                const std::size_t sp = rest.find(' ');
                const std::string_view part = rest.substr(0, sp);
                if (!part.empty()) {
                    const std::string origin = source + ":" + std::to_string(src.number()) + ":" +
                                               std::to_string(f->column + offset) +
                                               ": field options";
                    const std::size_t eq = part.find('=');
                    if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
                        throw parse_error(where, source, src.number(), f->column + offset,
                                          "options: expected KEY=VALUE (keys: " +
                                              runtime_key_names() + ")",
                                          std::string(part));
                    }
                    runtime_setting s{std::string(part.substr(0, eq)),
                                      std::string(part.substr(eq + 1)), origin};
                    if (sets_key(d.settings, s.key)) {
                        throw parse_error(
                            where, source, src.number(), f->column + offset,
                            "options: " + s.key + " given twice (each key at most once)",
                            std::string(part));
                    }
                    try {
                        apply_runtime_setting(scratch, s.key, s.value);
                    } catch (const error& e) {
                        throw parse_error(where, source, src.number(), f->column + offset,
                                          "options: " + std::string(e.what()), std::string(part));
                    }
                    d.settings.push_back(std::move(s));
                }
                if (sp == std::string_view::npos) break;
                rest.remove_prefix(sp + 1);
                offset += sp + 1;
            }
        }
        auto positive = [&](std::string_view name, std::string_view expected) {
            const detail::csv_field* f = field(row, name);
            std::optional<double> v;
            if (f && !f->text.empty()) {
                v = parse_real(src, where, *f, name, expected);
                if (!(*v > 0) || *v > 1e12) bad_field(src, where, *f, name, expected);
            }
            return v;
        };
        d.samples_per_s =
            positive("samples_per_s", "a throughput in samples/s, > 0 and at most 1e12");
        // A measured time in [1 ns, hi]: no measured inference is shorter than a nanosecond (a
        // kernel launch alone takes microseconds); below it the figure is a unit mistake or a
        // typo, whose log (1e-300 ms: an error of 1.6e+301 %) would swamp any fit.
        constexpr double min_measured_ms = 1e-6;
        auto measured_ms = [&](std::string_view name, std::string_view expected, double hi) {
            const auto v = positive(name, expected);
            if (v && (*v < min_measured_ms || *v > hi))
                bad_field(src, where, *field(row, name), name, expected);
            return v;
        };
        if (auto v = measured_ms("latency_ms",
                                 "a mean latency in ms, at least 1e-6 (1 ns: no measured "
                                 "inference is shorter) and at most a day",
                                 86.4e6))
            d.latency = duration{*v, units::ms};
        if (auto v = measured_ms("p99_ms",
                                 "a P99 latency in ms, at least 1e-6 (1 ns: no measured "
                                 "inference is shorter) and at most 1e12",
                                 1e12))
            d.p99 = duration{*v, units::ms};
        if (!d.samples_per_s && !d.latency) {
            throw parse_error(where, source, src.number(), 0,
                              "no measurement: the row needs samples_per_s or latency_ms",
                              std::string(line.substr(0, 80)));
        }
        if (const detail::csv_field* f = field(row, "label")) d.label = f->text;

        // Options that contradict the model: copy settings for a model that copies nothing.
        bool copies = false;
        for (const node& n : d.m->nodes) copies = copies || n.is_transfer();
        for (const runtime_setting& s : d.settings) {
            if (!copies && is_copy_setting(s.key)) {
                throw error(s.origin + ": " + s.key + "=" + s.value + " contradicts model '" +
                            model_f.text +
                            "', which declares no input or output transfer to copy (declare "
                            "them: docs/model-file.md)");
            }
        }
        out.push_back(std::move(d));
    }
    if (out.empty()) {
        throw parse_error(where, source, src.number(), 0, "no deployment rows after the header",
                          "");
    }
    return out;
}

/// Reads a deployments file; model paths are relative to its folder.
[[nodiscard]] inline std::vector<deployment_case> read_deployments_file(
    const std::string& path, const model_loader& load = read_model_or_refuse_onnx) {
    std::ifstream in = open_input_file(path, "read_deployments", max_small_file_bytes);
    return read_deployments(in, path, std::filesystem::path(path).parent_path(), load);
}

/// Reads rows from text (tests); model paths relative to `base_dir`.
[[nodiscard]] inline std::vector<deployment_case> parse_deployments(
    std::string_view text, const std::filesystem::path& base_dir,
    const std::string& source = "<string>", const model_loader& load = read_model_or_refuse_onnx) {
    std::istringstream in{std::string(text)};
    return read_deployments(in, source, base_dir, load);
}

}  // namespace perfcast::io
