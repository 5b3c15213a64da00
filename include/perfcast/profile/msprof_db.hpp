// perfcast/profile/msprof_db.hpp: op rows of msprof's SQLite export (`msprof_*.db`) and
// torch_npu's (`ascend_pytorch_profiler*.db`), from rows a caller reads (runtime; allocates;
// no database code here).
//
// The export holds the tasks of op_summary / kernel_details in four tables: TASK (one row per
// device task: startNs, endNs, deviceId, globalTaskId; memory copies and events too),
// COMPUTE_TASK_INFO (one row per op task, keyed by globalTaskId: name, opType, taskType, blockDim,
// mixBlockDim, shapes, dtypes, formats, waitNs; text as ids into STRING_IDS), STRING_IDS (id,
// value) and TASK_PMU_INFO (globalTaskId, name, value: one row per task and PMU metric, the
// metric's name a STRING_IDS id; present when collected with --aic-metrics). `read_msprof_db`
// turns them into the same `kernel_row`s as the CSV reader (kernel_details.hpp): an op row is a
// COMPUTE_TASK_INFO row joined to its TASK row, its PMU metrics named as the CSV columns are
// (`kernel_column_spellings`), its engine checked against the cycle counters
// (`engine_from_cycles`) and its shapes against each other (`check_row`).
//
// The library holds no SQLite: the caller passes a `db_row_source` (db_source.hpp) that reads
// named columns of a named table (the perfcast command's is examples/perfcast/sqlite_source.cpp,
// over the system's SQLite; tests and fuzzing use `memory_db_source`). Why columns by name rather
// than one method per table: the schema (which tables, which columns, what they mean) stays in this
// header, in one place, and a source needs no knowledge of msprof. Joining the tables by
// globalTaskId and resolving STRING_IDS happens here, in memory, for the same reason: the rules
// (what a missing TASK row or an unknown string id costs) are the library's, and tested without a
// database.
//
// Damage is handled as the CSV reader handles it: a cell that is not what its column holds (text
// in startNs, an end before the start, a string id STRING_IDS lacks, a negative PMU value) skips
// the op row it belongs to, listed as a `skipped_row` whose source is "FILE:TABLE" and whose line
// is the row's position in that table (1-based, in the order the source read them);
// `kernel_reader_options::strict` makes the first one an error. A missing required table or
// column is an error either way. For an op row, `kernel_row::line` holds its globalTaskId (the key
// to look it up in the database).
//
// Past 500 lines because it is one reader: the schema table, the conversions of cells into the
// row structs and the join share the same columns and damage rules; split, one schema would be
// spread over files. The row-source interface is db_source.hpp, the chip judgement
// chip_evidence.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../units.hpp"
#include "chip_evidence.hpp"
#include "csv.hpp"
#include "db_source.hpp"
#include "kernel_columns.hpp"
#include "kernel_details.hpp"

namespace perfcast::profile {

/// The tables and columns read. Required columns (marked) must exist; the others may be absent
/// (older or trimmed exports) and then read as not recorded.
struct db_column {
    std::string_view name;
    bool required = false;
    std::optional<kernel_column> fills{};  // the op row field it gives (for the header)
};
namespace db_schema {
inline constexpr std::string_view strings_table = "STRING_IDS";
inline constexpr std::array<db_column, 2> strings{{{"id", true}, {"value", true}}};
enum strings_col : std::size_t { s_id, s_value };

inline constexpr std::string_view task_table = "TASK";
inline constexpr std::array<db_column, 4> task{{{"globalTaskId", true},
                                                {"startNs", true, kernel_column::start},
                                                {"endNs", true, kernel_column::duration},
                                                {"deviceId", false, kernel_column::device_id}}};
enum task_col : std::size_t { t_global_task_id, t_start, t_end, t_device };

inline constexpr std::string_view compute_table = "COMPUTE_TASK_INFO";
inline constexpr std::array<db_column, 13> compute{{
    {"globalTaskId", true},
    {"name", false, kernel_column::name},
    {"opType", true, kernel_column::op_type},
    {"taskType", true, kernel_column::task_type},
    {"blockDim", false, kernel_column::block_dim},
    {"mixBlockDim", false, kernel_column::mix_block_dim},
    {"inputShapes", false, kernel_column::input_shapes},
    {"inputDataTypes", false, kernel_column::input_types},
    {"inputFormats", false, kernel_column::input_formats},
    {"outputShapes", false, kernel_column::output_shapes},
    {"outputDataTypes", false, kernel_column::output_types},
    {"outputFormats", false, kernel_column::output_formats},
    {"waitNs", false, kernel_column::wait},
}};
enum compute_col : std::size_t {
    c_global_task_id,
    c_name,
    c_op_type,
    c_task_type,
    c_block_dim,
    c_mix_block_dim,
    c_input_shapes,
    c_input_types,
    c_input_formats,
    c_output_shapes,
    c_output_types,
    c_output_formats,
    c_wait
};

inline constexpr std::string_view pmu_table = "TASK_PMU_INFO";
inline constexpr std::array<db_column, 3> pmu{
    {{"globalTaskId", true}, {"name", true}, {"value", true}}};
enum pmu_col : std::size_t { p_global_task_id, p_name, p_value };

// Chip evidence (optional tables): NPU_INFO (id = device id, name = the chip as the driver names
// it, 'Ascend910B' in both real files of tests/data/profiles/real) and AICORE_FREQ (deviceId,
// timestampNs, freq: the AI core clock in MHz, 1800 in the torch_npu file, which is
// Ascend910B2.ini's cube_freq).
inline constexpr std::string_view npu_table = "NPU_INFO";
// Evidence only: no column of theirs is required, a missing one is listed like any other.
inline constexpr std::array<db_column, 2> npu{{{"id", false}, {"name", false}}};
inline constexpr std::string_view freq_table = "AICORE_FREQ";
inline constexpr std::array<db_column, 3> freq{
    {{"deviceId", false}, {"timestampNs", false}, {"freq", false}}};
}  // namespace db_schema

/// TASK_PMU_INFO metrics whose unit differs from the CSV column they fill: the export's
/// aic_total_time / aiv_total_time are nanoseconds where op_summary's aicore_time(us) /
/// aiv_time(us) are microseconds. Evidence, from the real torch_npu export (checked on every row
/// by tests/test_msprof_db_sqlite.cpp): aic_total_time = aic_total_cycles / (AICORE_FREQ x
/// blockDim) in ns, e.g. 8973314 cycles / (1800 MHz x 16) = 311573.4 ns for a Conv2D whose task
/// took endNs - startNs = 314667 ns (a block dim above the core count runs in rounds: the
/// time is that times ceil(blockDim / cores)). Every other metric maps through
/// `kernel_column_spellings` exactly as a CSV header of that name does.
struct db_time_metric {
    std::string_view name;
    kernel_column column;
};
inline constexpr std::array<db_time_metric, 2> db_time_metrics{{
    {"aic_total_time", kernel_column::aicore_time},
    {"aiv_total_time", kernel_column::aiv_time},
}};

/// The columns a PMU metric may fill: cycle counters, pipe ratios, the older layout's
/// memory_bound and the profiler's cube_utilization(%), all plain numbers. (A metric named like
/// a descriptive column, "Name" or "Block Dim", is not a metric: not read.)
[[nodiscard]] constexpr bool pmu_column(kernel_column c) noexcept {
    switch (c) {
        case kernel_column::aic_total_cycles:
        case kernel_column::aiv_total_cycles:
        case kernel_column::memory_bound: return true;
        default: return share_range_of(c).has_value();  // the ratios and cube_utilization
    }
}

/// The kernel column a PMU metric name fills (time metrics: `db_time_metrics`), or nothing.
[[nodiscard]] constexpr std::optional<kernel_column> pmu_metric_column(
    std::string_view metric) noexcept {
    metric = detail::trim(metric);
    for (const auto& t : db_time_metrics) {
        if (detail::iequals(metric, t.name)) return t.column;
    }
    for (const auto& sp : kernel_column_spellings) {
        if (pmu_column(sp.column) && detail::iequals(metric, sp.text)) return sp.column;
    }
    return std::nullopt;
}

// The typed rows of the tables read, converted from cells (each conversion may find damage).

/// TASK: a device task's span.
struct msprof_task {
    std::int64_t global_task_id = 0;
    timestamp start;
    timestamp end;
    std::optional<int> device;
};

/// COMPUTE_TASK_INFO: an op task's description, strings resolved.
struct msprof_compute_task {
    std::int64_t global_task_id = 0;
    std::string name;
    std::string op_type;
    std::string task_type;  // AI_CORE, AI_VECTOR_CORE, MIX_AIV, ... as in the CSVs
    std::optional<int> block_dim;
    std::optional<int> mix_block_dim;
    std::string input_shapes, input_types, input_formats;
    std::string output_shapes, output_types, output_formats;
    std::optional<duration> wait;
};

/// TASK_PMU_INFO: one metric of one task.
struct msprof_pmu_value {
    std::int64_t global_task_id = 0;
    std::string metric;
    std::optional<double> value;
};

/// What else the database says: the chip, the clock, and what was not read.
struct msprof_db_info {
    std::map<int, std::string> npu_names;  // NPU_INFO: device id -> chip name
    struct clock_sample {
        std::optional<int> device;
        std::optional<std::int64_t> timestamp_ns;
        frequency clock{};
    };
    std::vector<clock_sample> aicore_clock;  // AICORE_FREQ, as stored
    std::size_t other_tasks = 0;     // TASK rows without COMPUTE_TASK_INFO (copies, events, ...)
    bool has_pmu = false;            // TASK_PMU_INFO present (collected with --aic-metrics)
    std::size_t pmu_without_op = 0;  // PMU rows of a task that is not an op row read
    std::vector<std::string> absent_columns;  // optional columns the tables lack, "TABLE.column"
};

/// The op rows and what else the database says.
struct msprof_db_table {
    kernel_table table;
    msprof_db_info info;
};

namespace detail {

/// STRING_IDS, id -> text.
using string_ids = std::unordered_map<std::int64_t, std::string>;

/// A STRING_IDS id resolved ("" for NULL: not recorded).
[[nodiscard]] inline std::string db_string(const string_ids& ids, const db_value& v,
                                           std::size_t col) {
    const auto id = db_integer(v, col);
    if (!id) return {};
    const auto it = ids.find(*id);
    if (it == ids.end()) {
        throw db_damage{col, "string id " + std::to_string(*id) + " not in STRING_IDS"};
    }
    return it->second;
}

[[nodiscard]] inline msprof_task to_task(std::span<const db_value> c) {
    using namespace db_schema;
    msprof_task t;
    t.global_task_id = db_required_integer(c[t_global_task_id], t_global_task_id);
    t.start = timestamp{db_required_integer(c[t_start], t_start)};
    // As the CSV reader's start (parse_timestamp_us takes digits only): a time before the epoch
    // is no profiler's clock, and its span to the other rows is nonsense. endNs, at least
    // startNs below, is then not negative either.
    if (t.start.ns < 0) throw db_damage{t_start, "negative, not a timestamp in nanoseconds"};
    t.end = timestamp{db_required_integer(c[t_end], t_end)};
    if (t.end < t.start) throw db_damage{t_end, "endNs before startNs"};
    if (const std::string_view p =
            value_problem(kernel_column::duration, (t.end - t.start).in(units::us));
        !p.empty()) {
        throw db_damage{t_end, std::string{p} + " after startNs"};
    }
    t.device = db_count(c[t_device], t_device);
    return t;
}

/// Text the export writes for "not recorded": empty, N/A (torch_npu) or NULL (msprof's MemSet
/// rows in tests/data/profiles/real/msinsight_misc/msprof_0.db).
[[nodiscard]] constexpr bool db_not_recorded(std::string_view s) noexcept {
    return not_recorded(s) || s == "NULL";
}

[[nodiscard]] inline msprof_compute_task to_compute_task(std::span<const db_value> c,
                                                         const string_ids& ids) {
    using namespace db_schema;
    msprof_compute_task t;
    t.global_task_id = db_required_integer(c[c_global_task_id], c_global_task_id);
    t.name = db_string(ids, c[c_name], c_name);
    t.op_type = db_string(ids, c[c_op_type], c_op_type);
    // Required, as the CSV reader's Type: a row without one cannot be placed.
    if (db_not_recorded(trim(t.op_type))) throw db_damage{c_op_type, "no op type"};
    t.task_type = db_string(ids, c[c_task_type], c_task_type);
    t.block_dim = db_count(c[c_block_dim], c_block_dim);
    t.mix_block_dim = db_count(c[c_mix_block_dim], c_mix_block_dim);
    t.input_shapes = db_string(ids, c[c_input_shapes], c_input_shapes);
    t.input_types = db_string(ids, c[c_input_types], c_input_types);
    t.input_formats = db_string(ids, c[c_input_formats], c_input_formats);
    t.output_shapes = db_string(ids, c[c_output_shapes], c_output_shapes);
    t.output_types = db_string(ids, c[c_output_types], c_output_types);
    t.output_formats = db_string(ids, c[c_output_formats], c_output_formats);
    if (const auto w = db_integer(c[c_wait], c_wait)) {
        if (*w < 0) throw db_damage{c_wait, "negative value"};
        if (const std::string_view p =
                value_problem(kernel_column::wait, static_cast<double>(*w) / 1e3);
            !p.empty()) {
            throw db_damage{c_wait, std::string{p}};
        }
        t.wait = duration{static_cast<double>(*w), units::ns};
    }
    return t;
}

[[nodiscard]] inline msprof_pmu_value to_pmu_value(std::span<const db_value> c,
                                                   const string_ids& ids) {
    using namespace db_schema;
    msprof_pmu_value p;
    p.global_task_id = db_required_integer(c[p_global_task_id], p_global_task_id);
    p.metric = db_string(ids, c[p_name], p_name);
    p.value = db_number(c[p_value], p_value);
    return p;
}

/// The op row of a compute task (the TASK and PMU parts come later).
inline void fill_from_compute(kernel_row& row, const msprof_compute_task& t) {
    row.line = static_cast<std::size_t>(t.global_task_id);
    row.name = t.name;
    row.op_type = t.op_type;
    row.task_text = t.task_type;
    row.task = parse_task_type(t.task_type);
    row.block_dim = t.block_dim;
    row.mix_block_dim = t.mix_block_dim;
    row.wait = t.wait;
    const auto shapes = [&row](std::string_view column, const std::string& s,
                               std::vector<tensor_shape>& out) {
        const std::string_view v = trim(s);
        if (v == "N/A" || v == "NULL") return;
        if (!parse_shapes(strip_inner_quotes(v), out)) {
            row.notes.push_back({note_kind::bad_shape, std::string(column) + " = " + s});
        }
    };
    shapes("inputShapes", t.input_shapes, row.input_shapes);
    shapes("outputShapes", t.output_shapes, row.output_shapes);
    const auto dtypes = [](const std::string& s, std::vector<tensor_dtype>& out) {
        const std::string_view v = trim(s);
        if (!db_not_recorded(v)) parse_dtypes(strip_inner_quotes(v), out);
    };
    dtypes(t.input_types, row.input_types);
    dtypes(t.output_types, row.output_types);
    const auto formats = [](const std::string& s, std::vector<std::string>& out) {
        const std::string_view v = trim(s);
        if (!db_not_recorded(v)) parse_formats(strip_inner_quotes(v), out);
    };
    formats(t.input_formats, row.input_formats);
    formats(t.output_formats, row.output_formats);
}

/// Refuses a PMU value past its column's range, as the CSV reader does (kernel_columns.hpp
/// value_problem; the database writes times in ns).
inline void check_metric(kernel_column c, double v, const std::string& metric) {
    const bool ns = c == kernel_column::aicore_time || c == kernel_column::aiv_time;
    if (const std::string_view p = value_problem(c, ns ? v / 1e3 : v); !p.empty()) {
        throw db_damage{db_schema::p_value, std::string(p) + " (metric " + metric + ")"};
    }
}

/// One PMU value into its field; false when the field already has one (given twice).
[[nodiscard]] inline bool set_metric(kernel_row& row, kernel_column c, double v) {
    const auto put = [](auto& field, auto value) {
        if (field) return false;
        field = value;
        return true;
    };
    switch (c) {
        case kernel_column::aic_total_cycles:
            return put(row.aic_total_cycles, cycle_count{v, units::cycle});
        case kernel_column::aiv_total_cycles:
            return put(row.aiv_total_cycles, cycle_count{v, units::cycle});
        case kernel_column::aicore_time: return put(row.aicore_time, duration{v, units::ns});
        case kernel_column::aiv_time: return put(row.aiv_time, duration{v, units::ns});
        case kernel_column::aic_mac_ratio: return put(row.aic_mac_ratio, v);
        case kernel_column::aic_scalar_ratio: return put(row.aic_scalar_ratio, v);
        case kernel_column::aic_mte1_ratio: return put(row.aic_mte1_ratio, v);
        case kernel_column::aic_mte2_ratio: return put(row.aic_mte2_ratio, v);
        case kernel_column::aic_fixpipe_ratio: return put(row.aic_fixpipe_ratio, v);
        case kernel_column::aiv_vec_ratio: return put(row.aiv_vec_ratio, v);
        case kernel_column::aiv_scalar_ratio: return put(row.aiv_scalar_ratio, v);
        case kernel_column::aiv_mte2_ratio: return put(row.aiv_mte2_ratio, v);
        case kernel_column::aiv_mte3_ratio: return put(row.aiv_mte3_ratio, v);
        case kernel_column::cube_utilization: return put(row.cube_utilization_pct, v);
        case kernel_column::memory_bound: return put(row.memory_bound, v);
        default: return true;  // not a metric column (pmu_metric_column never gives one)
    }
}

/// Reads one table through `src`: the schema's columns the table has (a missing required one is
/// an error, a missing optional one reads NULL and is listed in `info.absent_columns`), then
/// `f(cells, row_number)` for each row, cells in schema order. False when there is no table.
template <std::size_t N, class F>
bool read_db_table(db_row_source& src, std::string_view table,
                   const std::array<db_column, N>& schema, msprof_db_info& info, F&& f) {
    const auto have = src.table_columns(table);
    if (!have) return false;
    std::vector<std::string_view> ask;
    std::array<std::optional<std::size_t>, N> slot{};  // schema column -> position in `ask`
    for (std::size_t i = 0; i < N; ++i) {
        const auto it = std::find_if(have->begin(), have->end(), [&](const std::string& c) {
            return iequals(c, schema[i].name);
        });
        if (it != have->end()) {
            slot[i] = ask.size();
            ask.push_back(schema[i].name);
            continue;
        }
        if (schema[i].required) {
            std::string all;
            for (const std::string& c : *have) all += (all.empty() ? "" : ",") + c;
            throw parse_error("read_msprof_db", src.name(), 0, 0,
                              std::string(table) + " has no column " + std::string(schema[i].name) +
                                  " (not an msprof export this reader knows)",
                              all);
        }
        info.absent_columns.push_back(std::string(table) + "." + std::string(schema[i].name));
    }
    std::array<db_value, N> cells{};
    std::size_t n = 0;
    src.read_table(table, ask, [&](std::span<const db_value> got) {
        if (got.size() != ask.size()) {
            throw ::perfcast::error("perfcast::read_msprof_db: " + src.name() +
                                    ": the row source gave " + std::to_string(got.size()) +
                                    " cells for " + std::to_string(ask.size()) + " columns of " +
                                    std::string(table));
        }
        for (std::size_t i = 0; i < N; ++i) cells[i] = slot[i] ? got[*slot[i]] : db_value{};
        f(std::span<const db_value>(cells), ++n);
    });
    return true;
}

}  // namespace detail

/// The op rows of an msprof / torch_npu SQLite export read through `src`, in start-time order,
/// with every damaged row listed (module comment). `opt`: strict, device, several_devices,
/// max_skipped_listed and check_matmul_shapes as for the CSV reader (its `csv` is not used).
/// Throws perfcast::parse_error for a missing table or required column and, `strict`, for the
/// first damaged row; perfcast::error for the source's own failures.
[[nodiscard]] inline msprof_db_table read_msprof_db(db_row_source& src,
                                                    kernel_reader_options opt = {}) {
    using namespace db_schema;
    static constexpr std::string_view where = "read_msprof_db";
    const std::string db = src.name();
    msprof_db_table out;
    kernel_table& kt = out.table;
    msprof_db_info& info = out.info;

    const auto skip = [&](std::string_view table, std::size_t n, std::span<const db_value> cells,
                          std::string reason) {
        const std::string source = db + ":" + std::string(table);
        if (opt.strict) throw parse_error(where, source, n, 0, reason, detail::cells_text(cells));
        ++kt.skipped_count;
        if (kt.skipped.size() < opt.max_skipped_listed) {
            kt.skipped.push_back({source, n, 0, std::move(reason), detail::cells_text(cells)});
        }
    };
    const auto damage_text = [](const detail::db_damage& d, std::span<const db_column> schema) {
        return d.problem + " in column '" + std::string(schema[d.column].name) + "'";
    };
    const auto no_table = [&](std::string_view table) {
        return parse_error(where, db, 0, 0,
                           "no table " + std::string(table) +
                               " (an msprof or torch_npu SQLite export has TASK, "
                               "COMPUTE_TASK_INFO and STRING_IDS)",
                           std::string(table));
    };

    // STRING_IDS first: every text of the other tables is an id into it.
    detail::string_ids ids;
    if (!detail::read_db_table(
            src, strings_table, strings, info, [&](std::span<const db_value> c, std::size_t n) {
                try {
                    const std::int64_t id = detail::db_required_integer(c[s_id], s_id);
                    if (c[s_value].type != db_value::kind::text &&
                        c[s_value].type != db_value::kind::null) {
                        throw detail::db_damage{
                            s_value,
                            std::string(detail::kind_name(c[s_value].type)) + ", not text"};
                    }
                    if (!ids.emplace(id, c[s_value].text).second) {
                        throw detail::db_damage{s_id, "id given twice (the first is kept)"};
                    }
                } catch (const detail::db_damage& d) {
                    skip(strings_table, n, c, damage_text(d, strings));
                }
            })) {
        throw no_table(strings_table);
    }

    // COMPUTE_TASK_INFO: the op rows, keyed by globalTaskId.
    struct op {
        kernel_row row;
        std::size_t compute_row = 0;  // its row number in COMPUTE_TASK_INFO
        std::vector<db_value> cells;  // for the excerpt when it has no TASK row
        bool timed = false;           // its TASK row was read
        bool damaged = false;         // a damaged TASK or PMU row of it was skipped
    };
    std::vector<op> ops;
    std::unordered_map<std::int64_t, std::size_t> by_id;
    if (!detail::read_db_table(
            src, compute_table, compute, info, [&](std::span<const db_value> c, std::size_t n) {
                try {
                    const msprof_compute_task t = detail::to_compute_task(c, ids);
                    if (t.global_task_id < 0) {
                        throw detail::db_damage{c_global_task_id, "negative globalTaskId"};
                    }
                    if (by_id.contains(t.global_task_id)) {
                        throw detail::db_damage{c_global_task_id,
                                                "globalTaskId given twice (the first is kept)"};
                    }
                    op o;
                    detail::fill_from_compute(o.row, t);
                    o.compute_row = n;
                    o.cells.assign(c.begin(), c.end());
                    by_id.emplace(t.global_task_id, ops.size());
                    ops.push_back(std::move(o));
                } catch (const detail::db_damage& d) {
                    skip(compute_table, n, c, damage_text(d, compute));
                }
            })) {
        throw no_table(compute_table);
    }

    // TASK: start, duration and device of each op row; the other tasks are counted.
    if (!detail::read_db_table(
            src, task_table, task, info, [&](std::span<const db_value> c, std::size_t n) {
                std::optional<std::size_t> at;
                try {
                    const std::int64_t id =
                        detail::db_required_integer(c[t_global_task_id], t_global_task_id);
                    const auto it = by_id.find(id);
                    if (it == by_id.end()) {
                        ++info.other_tasks;
                        return;
                    }
                    at = it->second;
                    op& o = ops[*at];
                    if (o.timed) {
                        throw detail::db_damage{t_global_task_id,
                                                "globalTaskId given twice (the first is kept)"};
                    }
                    const msprof_task t = detail::to_task(c);
                    o.row.start = t.start;
                    o.row.task_duration = t.end - t.start;
                    o.row.device = t.device;
                    o.timed = true;
                } catch (const detail::db_damage& d) {
                    std::string reason = damage_text(d, task);
                    if (at && !ops[*at].timed) {
                        ops[*at].damaged = true;
                        reason += ": op row globalTaskId " + std::to_string(ops[*at].row.line) +
                                  " left out";
                    }
                    skip(task_table, n, c, std::move(reason));
                }
            })) {
        throw no_table(task_table);
    }

    // TASK_PMU_INFO (absent without --aic-metrics): metrics named as the CSV columns.
    std::vector<std::string>& not_read = kt.header.not_read;
    std::map<kernel_column, std::string> metrics;  // the metrics read, by the field they fill
    info.has_pmu = detail::read_db_table(
        src, pmu_table, pmu, info, [&](std::span<const db_value> c, std::size_t n) {
            std::optional<std::size_t> at;
            try {
                const std::int64_t id =
                    detail::db_required_integer(c[p_global_task_id], p_global_task_id);
                const auto it = by_id.find(id);
                if (it == by_id.end()) {
                    ++info.pmu_without_op;
                    return;
                }
                at = it->second;
                const msprof_pmu_value p = detail::to_pmu_value(c, ids);
                const auto column = pmu_metric_column(p.metric);
                if (!column) {
                    if (std::find(not_read.begin(), not_read.end(), p.metric) == not_read.end()) {
                        not_read.push_back(p.metric);
                    }
                    return;
                }
                metrics.emplace(*column, p.metric);
                if (p.value) detail::check_metric(*column, *p.value, p.metric);
                if (p.value && !detail::set_metric(ops[*at].row, *column, *p.value)) {
                    throw detail::db_damage{p_name, "metric " + p.metric + " given twice"};
                }
            } catch (const detail::db_damage& d) {
                std::string reason = damage_text(d, pmu);
                if (at) {
                    ops[*at].damaged = true;
                    reason +=
                        ": op row globalTaskId " + std::to_string(ops[*at].row.line) + " left out";
                }
                skip(pmu_table, n, c, std::move(reason));
            }
        });

    // Chip evidence (a damaged row costs no op row, and is listed like the others).
    (void)detail::read_db_table(
        src, npu_table, npu, info, [&](std::span<const db_value> c, std::size_t n) {
            try {
                const auto id = detail::db_count(c[0], 0);
                if (c[1].type != db_value::kind::text) {
                    throw detail::db_damage{
                        1, std::string(detail::kind_name(c[1].type)) + ", not a chip name"};
                }
                if (id) info.npu_names.emplace(*id, c[1].text);
            } catch (const detail::db_damage& d) {
                skip(npu_table, n, c, damage_text(d, npu));
            }
        });
    (void)detail::read_db_table(src, freq_table, freq, info,
                                [&](std::span<const db_value> c, std::size_t n) {
                                    try {
                                        msprof_db_info::clock_sample s;
                                        s.device = detail::db_count(c[0], 0);
                                        s.timestamp_ns = detail::db_integer(c[1], 1);
                                        const auto mhz = detail::db_number(c[2], 2);
                                        if (!mhz || *mhz == 0)
                                            throw detail::db_damage{2, "not a clock in MHz"};
                                        s.clock = frequency{*mhz, units::MHz};
                                        info.aicore_clock.push_back(s);
                                    } catch (const detail::db_damage& d) {
                                        skip(freq_table, n, c, damage_text(d, freq));
                                    }
                                });

    // The op rows: without a TASK row there is no start or duration, so the row is left out.
    std::map<int, std::size_t> devices;
    for (op& o : ops) {
        if (o.damaged) continue;
        if (!o.timed) {
            skip(compute_table, o.compute_row, o.cells,
                 "globalTaskId " + std::to_string(o.row.line) +
                     " has no TASK row (no start or duration): op row left out");
            continue;
        }
        engine_from_cycles(o.row);
        check_row(o.row, opt.check_matmul_shapes);
        if (o.row.device) {
            ++devices[*o.row.device];
            if (opt.device && *o.row.device != *opt.device) continue;
        }
        kt.rows.push_back(std::move(o.row));
    }
    detail::check_devices(devices, opt, db, where);
    detail::check_step({}, opt, db, where);  // the export has no Step Id per row
    std::stable_sort(kt.rows.begin(), kt.rows.end(), [](const kernel_row& a, const kernel_row& b) {
        return a.start != b.start ? a.start < b.start : a.line < b.line;
    });

    // The header: the database columns read, as "TABLE.column", then the metrics read, by
    // name; `format` says msprof (the export holds op_summary's content).
    kernel_header& h = kt.header;
    h.format = kernel_format::msprof_op_summary;
    const auto add_column = [&h](std::string text, std::optional<kernel_column> c) {
        if (c && !h.index[static_cast<std::size_t>(*c)]) {
            h.index[static_cast<std::size_t>(*c)] = h.columns.size();
        }
        h.columns.push_back(std::move(text));
    };
    const auto add_table = [&](std::string_view table, std::span<const db_column> schema) {
        for (const db_column& c : schema) {
            std::string text = std::string(table) + "." + std::string(c.name);
            if (std::find(info.absent_columns.begin(), info.absent_columns.end(), text) ==
                info.absent_columns.end()) {
                add_column(std::move(text), c.fills);
            }
        }
    };
    add_table(compute_table, compute);
    add_table(task_table, task);
    for (const auto& [c, name] : metrics) add_column(name, c);
    return out;
}

/// What the database says about its chip (NPU_INFO names, AICORE_FREQ clocks) for the devices the
/// rows came from (`devices`; empty: all), judged by `judge_chip_evidence`: 'Ascend910B2' names
/// the preset ascend910b2; 'Ascend910B', in both real exports, names no model.
[[nodiscard]] inline chip_evidence db_chip_evidence(const msprof_db_info& info,
                                                    const std::vector<int>& devices = {}) {
    const auto wanted = [&devices](std::optional<int> d) {
        return devices.empty() || !d ||
               std::find(devices.begin(), devices.end(), *d) != devices.end();
    };
    std::vector<std::string> names;
    for (const auto& [id, n] : info.npu_names) {
        if (wanted(id)) names.push_back(n);
    }
    if (names.empty()) {  // NPU_INFO lists other ids: any name is better than none
        for (const auto& [id, n] : info.npu_names) names.push_back(n);
    }
    std::vector<frequency> clocks;
    for (const auto& s : info.aicore_clock) {
        if (wanted(s.device)) clocks.push_back(s.clock);
    }
    return judge_chip_evidence(names, clocks, "NPU_INFO", "AICORE_FREQ");
}

}  // namespace perfcast::profile
