// perfcast/profile/discover.hpp: the op tables in a profiler's output folder (runtime; reads
// the file system).
//
// A user points perfcast at what the profiler wrote: a torch_npu `*_ascend_pt` folder (its
// `ASCEND_PROFILER_OUTPUT/kernel_details.csv`), a folder of per-rank such folders, an msprof
// `PROF_*` folder (`mindstudio_profiler_output/op_summary_*.csv`, older releases
// `device_N/summary/op_summary_*.csv`), sliced op summaries (`op_summary_<stamp>_slice_<N>.csv`,
// read in slice order as one table: for_each_source_file), or a single CSV. `discover_profiles`
// walks the folder and returns each op table found, with what the folder says about it (tool, rank,
// device) and how it was recognised; every CSV it looked at and did not take is listed with the
// reason.
//
// Chosen by content, not by name alone: a candidate is taken only if its header has the op
// table's required columns (kernel_details.hpp); op_statistic, api_statistic, task_time,
// step_trace_time and operator_details are statistics, not per-task rows. A torch_npu folder
// also holds the raw msprof output it was made from (`PROF_*` under the `*_ascend_pt` folder):
// its op_summary is the same tasks again, so it is listed as not taken when the folder has a
// kernel_details.csv.
//
// SQLite exports (`msprof_*.db`, which msprof writes beside its CSVs or alone with --type=db;
// `ascend_pytorch_profiler*.db`, torch_npu's with export_type db) are op tables too, recognised
// by the SQLite header string and read through profile/msprof_db.hpp. When one run wrote both,
// the CSV is taken and the .db listed as not taken (the same tasks; the CSV is what every
// perfcast release reads, and needs no SQLite): "one run" is the torch_npu folder holding
// ASCEND_PROFILER_OUTPUT, else the msprof PROF_* folder, else the file's own folder. Name the .db
// itself to read it instead.
//
// Links to folders are followed (a folder of links to each rank's output is read as the folders
// themselves); a table reached twice, through a link and directly or round a loop of links, is
// taken once, under the first of its paths in name order. max_depth bounds a loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "csv.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// How an op table is stored.
enum class source_format : unsigned char {
    csv,     // op_summary / kernel_details / the minimal format (kernel_details.hpp)
    sqlite,  // an msprof or torch_npu SQLite export (msprof_db.hpp, through a db_row_source)
};

/// One op table: one file, or the slices of one sliced op_summary in slice order.
struct profile_source {
    std::vector<std::filesystem::path> files;
    std::string tool;  // "torch_npu", "msprof" or "file"
    source_format format = source_format::csv;
    std::optional<int> rank;    // torch_npu: profiler_info_<rank>.json beside the output folder
    std::optional<int> device;  // msprof: the device_<N> folder above the table
    std::string evidence;       // how it was recognised, for the user to check
    /// The timeline of the same run, when the folder has one beside the table: torch_npu's
    /// trace_view.json, msprof's msprof_*.json (profile/timeline.hpp reads it).
    std::optional<std::filesystem::path> timeline;
    /// msprof's info file for the table's device, PROF_*/device_<N>/info.json.<N>, when the table
    /// is in a PROF_* folder that has one (profile/device_info.hpp reads it; it names the cube
    /// cores and AI core clock): the device of the device_<N> folder above the table, else the
    /// only device_<N> folder with one.
    std::optional<std::filesystem::path> device_info;

    /// The first file's path, with " (+N slices)" when sliced.
    [[nodiscard]] std::string name() const {
        std::string n = files.empty() ? std::string("-") : files.front().generic_string();
        if (files.size() > 1) n += " (+" + std::to_string(files.size() - 1) + " slices)";
        return n;
    }
};

/// A CSV or .db file the walk looked at and did not take, and why.
struct passed_over {
    std::filesystem::path path;
    std::string reason;
};

struct discovery {
    std::vector<profile_source> sources;
    std::vector<passed_over> not_taken;
};

struct discover_options {
    /// Folders deeper than this below the given one are not entered (a torch_npu run folder
    /// holds the table 2 levels down, msprof's older layout 3 to 4).
    int max_depth = 8;
    /// Directory entries looked at before the walk stops with an error (a guard against being
    /// pointed at / or a home folder).
    std::size_t max_entries = 200000;
};

namespace detail {

[[nodiscard]] inline bool starts_with(std::string_view s, std::string_view p) noexcept {
    return s.substr(0, p.size()) == p;
}
[[nodiscard]] inline bool ends_with(std::string_view s, std::string_view p) noexcept {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

/// A non-negative decimal integer, or nothing.
[[nodiscard]] inline std::optional<int> small_int(std::string_view s) noexcept {
    if (s.empty() || s.size() > 6) return std::nullopt;
    int v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    return v;
}

/// N of "op_summary_<stamp>_slice_<N>.csv", and the name without "_slice_<N>".
struct slice_name {
    std::string group;
    int index = 0;
};
[[nodiscard]] inline std::optional<slice_name> parse_slice(std::string_view file) {
    constexpr std::string_view mark = "_slice_";
    if (!ends_with(file, ".csv")) return std::nullopt;
    const std::string_view stem = file.substr(0, file.size() - 4);
    const auto at = stem.rfind(mark);
    if (at == std::string_view::npos) return std::nullopt;
    const auto n = small_int(stem.substr(at + mark.size()));
    if (!n) return std::nullopt;
    return slice_name{std::string(stem.substr(0, at)), *n};
}

/// Slice numbers absent from `files` (the slices of one table in slice order): each gap, the
/// numbers `from` to `to`, before `files[before]`. Slices are taken to be numbered from 0 (an
/// assumption from the names msprof writes, op_summary_<stamp>_slice_0.csv the first), so a first
/// slice above 0 has a gap before it too; slices after the last cannot be known. Nothing when a
/// name is not a slice's.
struct slice_gap {
    std::size_t before = 0;
    int from = 0;
    int to = 0;
};
[[nodiscard]] inline std::vector<slice_gap> slice_gaps(
    const std::vector<std::filesystem::path>& files) {
    std::vector<slice_gap> gaps;
    int next = 0;
    for (std::size_t k = 0; k < files.size(); ++k) {
        const auto n = parse_slice(files[k].filename().string());
        if (!n) return {};  // not slices
        if (n->index > next) gaps.push_back({k, next, n->index - 1});
        next = std::max(next, n->index + 1);
    }
    return gaps;
}

/// "slice 3", "slices 1 and 2", "slices 1 to 9": the numbers of one gap.
[[nodiscard]] inline std::string slice_numbers(const slice_gap& g) {
    if (g.from == g.to) return "slice " + std::to_string(g.from);
    return "slices " + std::to_string(g.from) + (g.to == g.from + 1 ? " and " : " to ") +
           std::to_string(g.to);
}

/// Every gap of `files` ("slices 1 to 9, slice 12"), or "" when none.
[[nodiscard]] inline std::string missing_slices(const std::vector<std::filesystem::path>& files) {
    std::string out;
    for (const slice_gap& g : slice_gaps(files)) {
        if (!out.empty()) out += ", ";
        out += slice_numbers(g);
    }
    return out;
}

/// Whether `path` starts with the SQLite header string, "SQLite format 3" and a NUL: the first 16
/// bytes of every SQLite 3 database (https://www.sqlite.org/fileformat.html, 1.3.1 "Magic Header
/// String"). Recognition only: the database itself is read by SQLite, never here.
[[nodiscard]] inline bool is_sqlite_file(const std::filesystem::path& path) {
    static constexpr char magic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                       'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
    std::ifstream f(path, std::ios::binary);
    char head[16] = {};
    if (!f.read(head, sizeof head)) return false;
    return std::equal(std::begin(head), std::end(head), std::begin(magic));
}

/// msprof_<stamp>.db or ascend_pytorch_profiler[_<rank>].db: the exports holding op rows (not
/// analysis.db, nor msprof's per-device internal databases).
[[nodiscard]] inline bool is_export_db_name(std::string_view name) noexcept {
    return ends_with(name, ".db") &&
           (starts_with(name, "msprof_") || starts_with(name, "ascend_pytorch_profiler"));
}

/// Why `path` is not an op table, or nothing when its header is one.
[[nodiscard]] inline std::optional<std::string> not_an_op_table(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "cannot open file for reading";
    try {
        kernel_details_reader r(f, path.generic_string());
        (void)r;
        return std::nullopt;
    } catch (const parse_error& e) {
        return std::string("not an op table: ") + e.what();
    }
}

/// Rank from "profiler_info_<N>.json" in `dir` (torch_npu writes one per rank beside
/// ASCEND_PROFILER_OUTPUT).
/// The one timeline in `dir` named like `prefix`*.json (trace_view.json for torch_npu,
/// msprof_*.json for msprof); nothing when there is none or more than one (sliced timelines:
/// which slice goes with the table is not known).
[[nodiscard]] inline std::optional<std::filesystem::path> timeline_in(
    const std::filesystem::path& dir, std::string_view prefix) {
    std::optional<std::filesystem::path> found;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (!starts_with(n, prefix) || !ends_with(n, ".json")) continue;
        if (found) return std::nullopt;
        found = it->path();
    }
    return found;
}

[[nodiscard]] inline std::optional<int> rank_in(const std::filesystem::path& dir) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        constexpr std::string_view p = "profiler_info_";
        if (starts_with(n, p) && ends_with(n, ".json")) {
            if (auto r = small_int(std::string_view(n).substr(p.size(), n.size() - p.size() - 5)))
                return r;
        }
    }
    return std::nullopt;
}

/// The rank of a torch_npu table from profiler_info_<N>.json in its `run` folder, with the
/// evidence.
inline void add_rank(profile_source& s, const std::filesystem::path& run) {
    s.rank = rank_in(run);
    if (s.rank) {
        s.evidence += ", rank " + std::to_string(*s.rank) + " from profiler_info_" +
                      std::to_string(*s.rank) + ".json";
    }
}

/// The device of an msprof table from the nearest device_<N> folder above `table` (not above
/// `root`), with the evidence.
inline void add_device(profile_source& s, const std::filesystem::path& table,
                       const std::filesystem::path& root) {
    for (std::filesystem::path d = table.parent_path(); !d.empty() && d != root.parent_path();
         d = d.parent_path()) {
        const std::string dn = d.filename().string();
        if (starts_with(dn, "device_")) {
            s.device = small_int(std::string_view(dn).substr(7));
            if (s.device) s.evidence += ", device " + std::to_string(*s.device) + " from " + dn;
            return;
        }
        if (d == root) return;
    }
}

/// PROF_*/device_<N>/info.json.<N> for the table at `table`: the nearest PROF_* folder at most 4
/// levels above it, then `device`'s info file, or with no device the one device_<N> folder that
/// has one (nothing when several do: which device the table is from is not known here).
[[nodiscard]] inline std::optional<std::filesystem::path> device_info_for(
    const std::filesystem::path& table, std::optional<int> device) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path prof;
    fs::path d = table.parent_path();
    for (int up = 0; up < 4 && !d.empty(); ++up, d = d.parent_path()) {
        if (starts_with(d.filename().string(), "PROF_")) {
            prof = d;
            break;
        }
        if (d == d.parent_path()) break;
    }
    if (prof.empty()) return std::nullopt;
    const auto info_of = [&](int n) -> std::optional<fs::path> {
        const std::string k = std::to_string(n);
        fs::path f = prof / ("device_" + k) / ("info.json." + k);
        std::error_code fec;
        if (fs::is_regular_file(f, fec)) return f;
        return std::nullopt;
    };
    if (device) return info_of(*device);
    std::optional<fs::path> found;
    for (fs::directory_iterator it(prof, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (!starts_with(n, "device_")) continue;
        const auto k = small_int(std::string_view(n).substr(7));
        if (!k) continue;
        if (auto f = info_of(*k)) {
            if (found) return std::nullopt;
            found = std::move(f);
        }
    }
    return found;
}

/// torch_npu: the device info file of the one PROF_* folder inside its run folder `run` (the
/// *_ascend_pt folder, where torch_npu keeps msprof's raw collection), by device_info_for's rules;
/// nothing when there is none or several.
[[nodiscard]] inline std::optional<std::filesystem::path> device_info_in_run(
    const std::filesystem::path& run) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::optional<fs::path> prof;
    for (fs::directory_iterator it(run, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code dec;
        if (!starts_with(it->path().filename().string(), "PROF_") || !it->is_directory(dec)) {
            continue;
        }
        if (prof) return std::nullopt;
        prof = it->path();
    }
    if (!prof) return std::nullopt;
    return device_info_for(*prof / "table", std::nullopt);  // a path inside it: starts at *prof
}

}  // namespace detail

/// The op tables under `root` (a folder or one file). Throws perfcast::error when `root` does
/// not exist, or when the walk passes `max_entries`.
[[nodiscard]] inline discovery discover_profiles(const std::filesystem::path& root,
                                                 discover_options opt = {}) {
    namespace fs = std::filesystem;
    discovery out;
    std::error_code ec;
    const fs::file_status st = fs::status(root, ec);
    if (ec || !fs::exists(st)) {
        throw parse_error("discover_profiles", root.generic_string(), 0, 0,
                          "no such file or folder", root.generic_string());
    }
    if (!fs::is_directory(st)) {
        // Only a regular file is looked into first: a FIFO (a process substitution) is read
        // once, and SQLite needs a file anyway.
        const bool db = fs::is_regular_file(st) && detail::is_sqlite_file(root);
        profile_source s{{root},
                         "file",
                         db ? source_format::sqlite : source_format::csv,
                         std::nullopt,
                         std::nullopt,
                         db ? "the file given (an SQLite database)" : "the file given",
                         std::nullopt,
                         std::nullopt};
        // msprof's older layout, device_N/summary/op_summary_*.csv: the file's device.
        const fs::path whole = fs::absolute(root, ec);  // lexical: links kept as named
        const fs::path file = ec ? root : whole;
        detail::add_device(s, file, file.parent_path().parent_path());
        s.device_info = detail::device_info_for(root, s.device);
        out.sources.push_back(std::move(s));
        return out;
    }

    // Candidates by name, then by content.
    struct candidate {
        fs::path path;
        std::optional<detail::slice_name> slice;
    };
    std::vector<candidate> found;
    std::vector<fs::path> dbs;
    std::size_t entries = 0;
    fs::recursive_directory_iterator it(root,
                                        fs::directory_options::skip_permission_denied |
                                            fs::directory_options::follow_directory_symlink,
                                        ec);
    if (ec) {
        throw parse_error("discover_profiles", root.generic_string(), 0, 0,
                          "cannot list folder: " + ec.message(), root.generic_string());
    }
    for (const fs::recursive_directory_iterator end; it != end; it.increment(ec)) {
        if (ec) break;
        if (++entries > opt.max_entries) {
            throw parse_error("discover_profiles", root.generic_string(), 0, 0,
                              "more than " + std::to_string(opt.max_entries) +
                                  " entries: point at one run's output folder",
                              root.generic_string());
        }
        if (it.depth() >= opt.max_depth) it.disable_recursion_pending();
        std::error_code fec;
        if (!it->is_regular_file(fec)) continue;
        const std::string name = it->path().filename().string();
        if (detail::ends_with(name, ".db")) {
            if (detail::is_export_db_name(name)) {
                dbs.push_back(it->path());
            } else {
                out.not_taken.push_back({it->path(),
                                         "not an op database by its name (the exports holding "
                                         "op rows are msprof_*.db and "
                                         "ascend_pytorch_profiler*.db)"});
            }
            continue;
        }
        if (!detail::ends_with(name, ".csv")) continue;
        if (name == "kernel_details.csv" || detail::starts_with(name, "op_summary")) {
            found.push_back({it->path(), detail::parse_slice(name)});
        } else {
            out.not_taken.push_back({it->path(),
                                     "not an op table by its name (statistics or "
                                     "another view; the op tables are "
                                     "kernel_details.csv and op_summary_*.csv)"});
        }
    }
    std::sort(found.begin(), found.end(),
              [](const candidate& a, const candidate& b) { return a.path < b.path; });
    std::sort(dbs.begin(), dbs.end());
    // One file reached by several paths (links): once, under a path without a link where the
    // walk found one (what the folders say, device_N and PROF_*, is read from the path), else
    // the first in name order.
    {
        const auto real_of = [](const fs::path& p) {
            std::error_code cec;
            fs::path real = fs::weakly_canonical(p, cec);
            return cec ? p : real;
        };
        // Whether a link stands between `root` and `p` (the root itself may be one: the paths
        // below it are what the walk chose among).
        const auto through_link = [&root](const fs::path& p) {
            fs::path at = root;
            for (const fs::path& part : p.lexically_relative(root)) {
                at /= part;
                std::error_code lec;
                if (fs::is_symlink(fs::symlink_status(at, lec))) return true;
            }
            return false;
        };
        const auto once = [&real_of, &through_link](auto& items, auto path_of) {
            std::map<fs::path, std::size_t> at;  // real path -> index kept
            std::vector<bool> drop(items.size(), false);
            for (std::size_t i = 0; i < items.size(); ++i) {
                const fs::path real = real_of(path_of(items[i]));
                const auto [where, fresh] = at.emplace(real, i);
                if (fresh) continue;
                const bool plain = !through_link(path_of(items[i]));
                const bool kept_plain = !through_link(path_of(items[where->second]));
                if (plain && !kept_plain) {
                    drop[where->second] = true;
                    where->second = i;
                } else {
                    drop[i] = true;
                }
            }
            std::remove_reference_t<decltype(items)> kept;
            for (std::size_t i = 0; i < items.size(); ++i)
                if (!drop[i]) kept.push_back(std::move(items[i]));
            items = std::move(kept);
        };
        once(found, [](const candidate& c) -> const fs::path& { return c.path; });
        once(dbs, [](const fs::path& p) -> const fs::path& { return p; });
        once(out.not_taken, [](const passed_over& n) -> const fs::path& { return n.path; });
    }

    // torch_npu roots: folders holding ASCEND_PROFILER_OUTPUT/kernel_details.csv or
    // ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler*.db.
    std::vector<fs::path> torch_roots;
    const auto torch_table = [](const fs::path& p) {
        return p.parent_path().filename() == "ASCEND_PROFILER_OUTPUT" &&
               (p.filename() == "kernel_details.csv" ||
                detail::starts_with(p.filename().string(), "ascend_pytorch_profiler"));
    };
    for (const candidate& c : found) {
        if (torch_table(c.path)) torch_roots.push_back(c.path.parent_path().parent_path());
    }
    for (const fs::path& p : dbs) {
        const fs::path r = p.parent_path().parent_path();
        if (torch_table(p) &&
            std::find(torch_roots.begin(), torch_roots.end(), r) == torch_roots.end())
            torch_roots.push_back(r);
    }
    const auto under_torch_root = [&](const fs::path& p) -> const fs::path* {
        for (const fs::path& r : torch_roots) {
            const auto rel = p.lexically_relative(r);
            if (!rel.empty() && *rel.begin() != "..") return &r;
        }
        return nullptr;
    };

    for (std::size_t i = 0; i < found.size(); ++i) {
        const candidate& c = found[i];
        const bool kd = c.path.filename() == "kernel_details.csv";
        if (!kd) {
            if (const fs::path* r = under_torch_root(c.path)) {
                out.not_taken.push_back(
                    {c.path, "msprof's raw output inside a torch_npu folder: the same tasks as " +
                                 (*r / "ASCEND_PROFILER_OUTPUT").generic_string()});
                continue;
            }
        }
        profile_source s;
        s.files.push_back(c.path);
        // The other slices of the same table follow it in path order: taken with it, in slice
        // order, when one of them is an op table (one that is not is reported when the table
        // is read: for_each_source_file).
        if (!kd && c.slice) {
            while (i + 1 < found.size() && found[i + 1].slice &&
                   found[i + 1].slice->group == c.slice->group &&
                   found[i + 1].path.parent_path() == c.path.parent_path()) {
                ++i;
                s.files.push_back(found[i].path);
            }
            std::sort(s.files.begin(), s.files.end(), [](const fs::path& a, const fs::path& b) {
                const auto ia = detail::parse_slice(a.filename().string())->index;
                const auto ib = detail::parse_slice(b.filename().string())->index;
                return ia != ib ? ia < ib : a < b;  // "_slice_1" and "_slice_01": by name
            });
        }
        std::vector<passed_over> why_not;
        for (const fs::path& f : s.files) {
            auto why = detail::not_an_op_table(f);
            if (!why) break;
            why_not.push_back({f, std::move(*why)});
        }
        if (why_not.size() == s.files.size()) {
            out.not_taken.insert(out.not_taken.end(), why_not.begin(), why_not.end());
            continue;
        }
        if (kd) {
            s.tool = "torch_npu";
            s.evidence = "kernel_details.csv";
            detail::add_rank(s, c.path.parent_path().parent_path());
            s.timeline = detail::timeline_in(c.path.parent_path(), "trace_view");
            s.device_info = detail::device_info_in_run(c.path.parent_path().parent_path());
        } else {
            s.tool = "msprof";
            s.evidence = "op_summary";
            s.timeline = detail::timeline_in(c.path.parent_path(), "msprof_");
            detail::add_device(s, c.path, root);
            s.device_info = detail::device_info_for(c.path, s.device);
            if (c.slice) {
                s.evidence += ", " + std::to_string(s.files.size()) + " slices";
                const std::string missing = detail::missing_slices(s.files);
                if (!missing.empty()) s.evidence += " (" + missing + " missing)";
            }
        }
        out.sources.push_back(std::move(s));
    }

    // SQLite exports: taken when their run has no CSV op table.
    const auto run_of = [&](const fs::path& p) -> fs::path {
        if (const fs::path* r = under_torch_root(p)) return *r;
        for (fs::path d = p.parent_path(); !d.empty(); d = d.parent_path()) {
            const std::string dn = d.filename().string();
            if (dn == "ASCEND_PROFILER_OUTPUT") return d.parent_path();
            if (detail::starts_with(dn, "PROF_")) return d;
            if (d == root || d == d.parent_path()) break;
        }
        return p.parent_path();
    };
    const std::size_t csv_sources = out.sources.size();
    for (const fs::path& p : dbs) {
        const std::string name = p.filename().string();
        const bool torch = torch_table(p);
        if (!torch) {
            if (const fs::path* r = under_torch_root(p)) {
                out.not_taken.push_back(
                    {p, "msprof's raw output inside a torch_npu folder: the same tasks as " +
                            (*r / "ASCEND_PROFILER_OUTPUT").generic_string()});
                continue;
            }
        }
        const fs::path run = run_of(p);
        const auto same_run = std::find_if(
            out.sources.begin(), out.sources.begin() + static_cast<std::ptrdiff_t>(csv_sources),
            [&](const profile_source& s) { return run_of(s.files.front()) == run; });
        if (same_run != out.sources.begin() + static_cast<std::ptrdiff_t>(csv_sources)) {
            out.not_taken.push_back({p, "the SQLite export of the run whose CSV " +
                                            same_run->files.front().generic_string() +
                                            " is read (the same tasks; name the .db to read it "
                                            "instead)"});
            continue;
        }
        if (!detail::is_sqlite_file(p)) {
            out.not_taken.push_back({p, "not an SQLite database (no SQLite header)"});
            continue;
        }
        profile_source s;
        s.files.push_back(p);
        s.format = source_format::sqlite;
        s.tool = torch ? "torch_npu" : "msprof";
        s.evidence = name + " (SQLite export)";
        if (torch) detail::add_rank(s, p.parent_path().parent_path());
        detail::add_device(s, p, root);
        s.device_info = torch ? detail::device_info_in_run(p.parent_path().parent_path())
                              : detail::device_info_for(p, s.device);
        out.sources.push_back(std::move(s));
    }
    return out;
}

/// Why `s` cannot be read as CSV (it is an SQLite export), or nothing.
[[nodiscard]] inline std::optional<std::string> needs_database_reader(const profile_source& s) {
    if (s.format != source_format::sqlite) return std::nullopt;
    return s.name() +
           " is an SQLite export: read it with read_msprof_db (profile/msprof_db.hpp) over a "
           "db_row_source; the perfcast command does when built with SQLite";
}

namespace detail {

/// Whether two op table headers hold the same columns (in any order: a row is read by its own
/// file's header); when not, what differs, for the message.
[[nodiscard]] inline std::optional<std::string> header_difference(const kernel_header& a,
                                                                  const kernel_header& b) {
    std::vector<std::string> x = a.columns;
    std::vector<std::string> y = b.columns;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    if (x == y) return std::nullopt;
    std::vector<std::string> only_a;
    std::vector<std::string> only_b;
    std::set_difference(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(only_a));
    std::set_difference(y.begin(), y.end(), x.begin(), x.end(), std::back_inserter(only_b));
    const auto list = [](const std::vector<std::string>& v) {
        std::string out;
        for (std::size_t i = 0; i < v.size() && i < 5; ++i) out += (i ? ", '" : "'") + v[i] + "'";
        if (v.size() > 5) out += " and " + std::to_string(v.size() - 5) + " more";
        return out;
    };
    std::string d;
    if (!only_a.empty()) d += "lacks " + list(only_a);
    if (!only_b.empty()) d += std::string(d.empty() ? "" : "; ") + "has " + list(only_b);
    if (d.empty()) d = "has a column given twice";  // the same set, counted differently
    return d;
}

}  // namespace detail

/// Calls `f(kernel_details_reader&)` for each file of `s` in order (slices in slice order).
/// Throws perfcast::error for an SQLite source (`needs_database_reader`).
///
/// The slices of a sliced op_summary are one table: the device and step checks
/// (kernel_reader_options::device, step) run once over the rows of every slice, after the last
/// (rows of several devices over the slices are the "choose one" error; `device` keeps that
/// device's rows of every slice and is an error only when no slice has one). Every slice must
/// hold the first readable slice's columns (in any order), else the error names the slice and
/// the columns that differ (slices of one table have one header). A slice that cannot be read
/// (empty, or a header that is not an op table's) and slice numbers missing between the slices
/// (0 to the last) are reported, not read, as skipped parts (line 0) of the reader of the first
/// slice read; `strict` makes the first of them the error.
template <class F>
void for_each_source_file(const profile_source& s, kernel_reader_options opt, F&& f) {
    namespace fs = std::filesystem;
    static constexpr std::string_view where = "read_kernel_details";
    if (auto why = needs_database_reader(s)) throw ::perfcast::error(*why);
    if (s.device) opt.source_device = s.device;  // msprof's device_N folder above the table
    const std::vector<detail::slice_gap> gaps =
        s.tool == "msprof" ? detail::slice_gaps(s.files) : std::vector<detail::slice_gap>{};
    if (s.files.size() == 1 && gaps.empty()) {
        const fs::path& p = s.files.front();
        std::ifstream in = open_input(p.generic_string(), "read_profile_source");
        kernel_details_reader r(in, p.generic_string(), opt);
        f(r);
        return;
    }

    // Slices: their headers first (what is lost is said before any row is read), then the rows.
    std::vector<skipped_row> lost;
    std::vector<bool> readable(s.files.size(), false);
    std::optional<kernel_header> first;
    std::size_t first_at = 0;
    std::optional<parse_error> first_error;
    for (std::size_t k = 0; k < s.files.size(); ++k) {
        const std::string name = s.files[k].generic_string();
        for (const detail::slice_gap& g : gaps) {
            if (g.before != k) continue;
            const std::string what = detail::slice_numbers(g) + " missing before this one: " +
                                     (g.from == g.to ? "its" : "their") + " rows are not read";
            if (opt.strict) throw parse_error(where, name, 0, 0, what, "");
            lost.push_back({name, 0, 0, what, ""});
        }
        std::ifstream in = open_input(name, "read_profile_source");
        std::optional<kernel_header> header;
        try {
            header = kernel_details_reader(in, name, opt).header();  // the header alone
        } catch (const parse_error& e) {
            if (opt.strict) throw;
            if (!first_error) first_error = e;
            lost.push_back({name, 0, 0, "slice not read: " + e.problem(), e.text()});
            continue;
        }
        if (!first) {
            first = std::move(header);
            first_at = k;
        } else if (const auto d = detail::header_difference(*first, *header)) {
            throw parse_error(where, name, 1, 0,
                              "a header other than " + s.files[first_at].filename().string() +
                                  "'s: it " + *d +
                                  " (the slices of one table have one header: are they of one "
                                  "run?)",
                              "");
        }
        readable[k] = true;
    }
    if (!first) throw *first_error;  // no slice readable (discover_profiles takes none so)

    kernel_reader_options each = opt;
    each.check_at_end = false;
    std::map<int, std::size_t> devices;
    std::map<int, std::size_t> steps;
    for (std::size_t k = 0; k < s.files.size(); ++k) {
        if (!readable[k]) continue;
        const std::string name = s.files[k].generic_string();
        std::ifstream in = open_input(name, "read_profile_source");
        kernel_details_reader r(in, name, each);
        for (skipped_row& l : lost) r.add_skipped(std::move(l));
        lost.clear();
        f(r);
        for (const auto& [id, n] : r.devices()) devices[id] += n;
        for (const auto& [id, n] : r.steps()) steps[id] += n;
    }
    if (opt.check_at_end) {
        detail::check_devices(devices, opt, s.name(), where);
        detail::check_step(steps, opt, s.name(), where);
    }
}

/// Every row of the source's files (slices appended in slice order), and every skipped row.
[[nodiscard]] inline kernel_table read_profile_source(const profile_source& s,
                                                      kernel_reader_options opt = {}) {
    kernel_table all;
    for_each_source_file(s, opt, [&all](kernel_details_reader& r) {
        kernel_table t = detail::read_all(r);
        if (all.header.columns.empty()) all.header = t.header;  // every slice has its columns
        all.rows.insert(all.rows.end(), std::make_move_iterator(t.rows.begin()),
                        std::make_move_iterator(t.rows.end()));
        all.skipped.insert(all.skipped.end(), t.skipped.begin(), t.skipped.end());
        all.skipped_count += t.skipped_count;
    });
    return all;
}

}  // namespace perfcast::profile
