// Tests for perfcast/profile/msprof_db.hpp with an in-memory database (memory_db_source): known
// answers, the same rows as the CSV reader gives for the same data, every kind of damage, and the
// chip evidence. These run in every build, with or without SQLite; the real .db files are read
// in tests/test_msprof_db_sqlite.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/msprof_db.hpp>

#include "../examples/perfcast/sqlite_source.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_msprof_db {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast::profile;
namespace units = perfcast::units;
using perfcast::duration;

namespace {

using cells = std::vector<db_value>;
db_value I(std::int64_t v) { return db_value::of(v); }
db_value R(double v) { return db_value::of(v); }
db_value T(std::string_view v) { return db_value::of(v); }
const db_value null{};

/// A database in the export's layout, with STRING_IDS filled as strings are used.
struct fake_db {
    memory_db_source src{"fake.db"};
    std::map<std::string, std::int64_t> ids;

    // The columns in the real torch_npu export's order (ascend_pytorch_profiler_0.db).
    fake_db() {
        src.add("STRING_IDS", {"id", "value"});
        src.add("COMPUTE_TASK_INFO",
                {"name", "globalTaskId", "blockDim", "mixBlockDim", "taskType", "opType",
                 "inputFormats", "inputDataTypes", "inputShapes", "outputFormats",
                 "outputDataTypes", "outputShapes", "attrInfo", "waitNs"});
        src.add("TASK", {"startNs", "endNs", "deviceId", "connectionId", "globalTaskId",
                         "globalPid", "taskType", "contextId", "streamId", "taskId", "modelId"});
        src.add("TASK_PMU_INFO", {"globalTaskId", "name", "value"});
    }
    memory_db_source::table& table(std::string_view name) {
        memory_db_source::table* t = src.find(name);
        REQUIRE(t != nullptr);
        return *t;
    }
    memory_db_source::table& strings() { return table("STRING_IDS"); }
    memory_db_source::table& compute() { return table("COMPUTE_TASK_INFO"); }
    memory_db_source::table& task() { return table("TASK"); }
    memory_db_source::table& pmu() { return table("TASK_PMU_INFO"); }

    /// The STRING_IDS id of `s` (added when new).
    db_value str(const std::string& s) {
        auto [it, added] = ids.emplace(s, static_cast<std::int64_t>(ids.size()) + 100);
        if (added) strings().rows.push_back({I(it->second), T(s)});
        return I(it->second);
    }

    struct op {
        std::int64_t id;
        std::string name, type, core;
        std::int64_t block = 0, mix = 0;
        std::string in_shapes, in_types, in_formats, out_shapes, out_types, out_formats;
        std::int64_t wait_ns = 0;
    };
    void add_op(const op& o) {
        compute().rows.push_back({str(o.name), I(o.id), I(o.block), I(o.mix), str(o.core),
                                  str(o.type), str(o.in_formats), str(o.in_types), str(o.in_shapes),
                                  str(o.out_formats), str(o.out_types), str(o.out_shapes),
                                  str("N/A"), I(o.wait_ns)});
    }
    void add_task(std::int64_t id, std::int64_t start, std::int64_t end, std::int64_t device = 0,
                  const std::string& kind = "KERNEL_AICORE") {
        task().rows.push_back({I(start), I(end), I(device), I(0), I(id), I(1), str(kind),
                               I(4294967295), I(2), I(id + 1000), I(4294967295)});
    }
    void add_metric(std::int64_t id, const std::string& metric, db_value v) {
        pmu().rows.push_back({I(id), str(metric), std::move(v)});
    }
};

/// Two ops (a MatMul on the cube, a vector Add labelled AI_CORE whose cycles are all vector),
/// one memory copy, in TASK out of start order.
fake_db two_ops() {
    fake_db db;
    db.add_op({7, "mm", "MatMulV2", "AI_CORE", 24, 0, "\"128,256;256,512\"", "DT_BF16;DT_BF16",
               "ND;ND", "\"128,512\"", "DT_BF16", "ND", 0});
    db.add_op({3, "add", "Add", "AI_CORE", 48, 0, "\"1024;1024\"", "FLOAT;FLOAT", "ND;ND",
               "\"1024\"", "FLOAT", "ND", 2500});
    db.add_task(7, 2'000'000'000'000'100'000, 2'000'000'000'000'131'250);
    db.add_task(3, 2'000'000'000'000'000'000, 2'000'000'000'000'005'000);
    db.add_task(9, 2'000'000'000'000'200'000, 2'000'000'000'000'210'000, 0, "MEMCPY_ASYNC");
    db.add_metric(7, "aic_total_cycles", I(1'000'000));
    db.add_metric(7, "aiv_total_cycles", I(0));
    db.add_metric(7, "aic_total_time", R(30000.5));
    db.add_metric(7, "aic_mac_ratio", R(0.75));
    db.add_metric(7, "aic_mac_time", R(22500.0));  // no CSV column reads it
    db.add_metric(3, "aic_total_cycles", I(0));
    db.add_metric(3, "aiv_total_cycles", I(96'000));
    db.add_metric(3, "aiv_vec_ratio", R(0.5));
    db.add_metric(3, "aiv_mac_ratio", I(0));  // nor this one
    return db;
}

using perfcast_test::has;

}  // namespace

TEST_CASE("msprof db: op rows joined from COMPUTE_TASK_INFO, TASK, STRING_IDS and TASK_PMU_INFO") {
    fake_db db = two_ops();
    const msprof_db_table out = read_msprof_db(db.src);
    const kernel_table& t = out.table;
    REQUIRE(t.rows.size() == 2);
    CHECK(t.skipped_count == 0);
    // Start-time order, whatever the tables' order; `line` holds the globalTaskId.
    const kernel_row& add = t.rows[0];
    const kernel_row& mm = t.rows[1];
    CHECK(add.line == 3);
    CHECK(mm.line == 7);

    CHECK(mm.name == "mm");
    CHECK(mm.op_type == "MatMulV2");
    CHECK(mm.task_text == "AI_CORE");
    CHECK(mm.task == task_type::ai_core);
    CHECK(mm.start == timestamp{2'000'000'000'000'100'000});
    REQUIRE(mm.task_duration.has_value());
    CHECK(mm.task_duration->in(units::ns) == doctest::Approx(31250));
    CHECK(mm.device == 0);
    CHECK(mm.block_dim == 24);
    CHECK(mm.mix_block_dim == 0);
    REQUIRE(mm.input_shapes.size() == 2);
    CHECK(mm.input_shapes[1].dims == std::vector<std::int64_t>{256, 512});
    REQUIRE(mm.input_types.size() == 2);
    CHECK(mm.input_types[0].type == perfcast::dtype::bf16);
    CHECK(mm.input_formats == std::vector<std::string>{"ND", "ND"});
    CHECK(mm.output_shapes[0].dims == std::vector<std::int64_t>{128, 512});
    CHECK(mm.wait->in(units::ns) == doctest::Approx(0));
    CHECK(mm.aic_total_cycles->in(units::cycle) == 1'000'000);
    CHECK(mm.aiv_total_cycles->in(units::cycle) == 0);
    // aic_total_time is in nanoseconds (msprof_db.hpp, db_time_metrics).
    CHECK(mm.aicore_time->in(units::us) == doctest::Approx(30.0005));
    CHECK(mm.aic_mac_ratio == 0.75);
    CHECK_FALSE(mm.aiv_vec_ratio.has_value());
    CHECK(mm.notes.empty());

    // The vector op labelled AI_CORE: the cycle counters decide, as for the CSV.
    CHECK(add.task_text == "AI_CORE");
    CHECK(add.task == task_type::ai_vector_core);
    CHECK(add.has_note(note_kind::engine_from_cycles));
    CHECK(add.wait->in(units::us) == doctest::Approx(2.5));
    CHECK(add.aiv_vec_ratio == 0.5);

    // The memory copy is no op row; the metrics no CSV column reads are listed once.
    CHECK(out.info.other_tasks == 1);
    CHECK(out.info.has_pmu);
    CHECK(t.header.not_read == std::vector<std::string>{"aic_mac_time", "aiv_mac_ratio"});
    CHECK(t.header.has(kernel_column::aic_mac_ratio));
    CHECK(t.header.has(kernel_column::start));
    CHECK_FALSE(t.header.has(kernel_column::aic_fixpipe_ratio));
    CHECK(out.info.absent_columns.empty());
}

TEST_CASE("msprof db: a PMU metric fills the field its name fills as a CSV column") {
    // Every spelling of kernel_column_spellings that names a metric: a CSV with that column and
    // a database with that metric give the same field.
    std::size_t compared = 0;
    for (const auto& sp : kernel_column_spellings) {
        if (!pmu_column(sp.column)) continue;
        const std::string name(sp.text);
        const kernel_table csv = parse_kernel_details("Type,Accelerator Core,Duration(us)," + name +
                                                      "\nAdd,AI_VECTOR_CORE,1,0.25\n");
        fake_db db;
        db.add_op({1, "a", "Add", "AI_VECTOR_CORE", 1, 0, "\"4\"", "FLOAT", "ND", "\"4\"", "FLOAT",
                   "ND", 0});
        db.add_task(1, 1000, 2000);
        db.add_metric(1, name, R(0.25));
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.rows.size() == 1);
        REQUIRE(csv.rows.size() == 1);
        const kernel_row& a = csv.rows[0];
        const kernel_row& b = t.rows[0];
        INFO("metric ", name);
        CHECK(a.aic_total_cycles == b.aic_total_cycles);
        CHECK(a.aiv_total_cycles == b.aiv_total_cycles);
        CHECK(a.aic_mac_ratio == b.aic_mac_ratio);
        CHECK(a.aic_scalar_ratio == b.aic_scalar_ratio);
        CHECK(a.aic_mte1_ratio == b.aic_mte1_ratio);
        CHECK(a.aic_mte2_ratio == b.aic_mte2_ratio);
        CHECK(a.aic_fixpipe_ratio == b.aic_fixpipe_ratio);
        CHECK(a.aiv_vec_ratio == b.aiv_vec_ratio);
        CHECK(a.aiv_scalar_ratio == b.aiv_scalar_ratio);
        CHECK(a.aiv_mte2_ratio == b.aiv_mte2_ratio);
        CHECK(a.aiv_mte3_ratio == b.aiv_mte3_ratio);
        CHECK(a.cube_utilization_pct == b.cube_utilization_pct);
        CHECK(a.memory_bound == b.memory_bound);
        CHECK(b.notes.empty());
        ++compared;
    }
    CHECK(compared == 20);  // the metric spellings of the table (older layout's included)
    CHECK_FALSE(pmu_metric_column("Block Dim").has_value());  // a column, not a metric
    CHECK(pmu_metric_column(" AIC_MAC_RATIO ") == kernel_column::aic_mac_ratio);
}

TEST_CASE("msprof db: the rows of a real kernel_details, written as an export, read the same") {
    // Each row of the real torch_npu CSV of tests/data/profiles/real (Jan 2025, the day of the
    // real .db) stored as the export stores it: text as STRING_IDS ids, start and end in ns,
    // the wait in ns, each metric a TASK_PMU_INFO row, aicore_time(us) as aic_total_time in ns.
    const std::string path = PERFCAST_SOURCE_DIR
        "/tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
        "kernel_details.csv";
    std::ifstream f(path, std::ios::binary);
    REQUIRE(f.good());
    csv_options o;
    csv_reader raw(f, path, o);
    REQUIRE(raw.next());
    const std::vector<std::string> header = raw.record().to_strings();
    const auto col = [&header](std::string_view n) {
        for (std::size_t i = 0; i < header.size(); ++i)
            if (header[i] == n) return i;
        FAIL("no column ", n);
        return std::size_t{0};
    };
    fake_db db;
    std::int64_t id = 0;
    while (raw.next()) {
        const std::vector<std::string> r = raw.record().to_strings();
        const auto at = [&](std::string_view n) { return r[col(n)]; };
        std::int64_t start = 0;
        REQUIRE(detail::parse_timestamp_us(detail::trim(at("Start Time(us)")), start));
        const auto ns = [](const std::string& us) {
            return static_cast<std::int64_t>(std::llround(std::stod(us) * 1000.0));
        };
        const auto wait = at("Wait Time(us)");
        const auto count = [](const std::string& s) {
            return s == "N/A" ? null : I(std::stoll(s));
        };
        db.compute().rows.push_back(
            {db.str(at("Name")), I(id), count(at("Block Dim")), count(at("Mix Block Dim")),
             db.str(at("Accelerator Core")), db.str(at("Type")), db.str(at("Input Formats")),
             db.str(at("Input Data Types")), db.str(at("Input Shapes")),
             db.str(at("Output Formats")), db.str(at("Output Data Types")),
             db.str(at("Output Shapes")), db.str("N/A"), wait == "N/A" ? null : I(ns(wait))});
        db.add_task(id, start, start + ns(at("Duration(us)")));
        for (std::size_t i = 0; i < header.size(); ++i) {
            if (r[i] == "N/A" || r[i].empty()) continue;
            if (header[i] == "aicore_time(us)") {
                db.add_metric(id, "aic_total_time", R(std::stod(r[i]) * 1000.0));
            } else if (header[i] == "aiv_time(us)") {
                db.add_metric(id, "aiv_total_time", R(std::stod(r[i]) * 1000.0));
            } else if (pmu_metric_column(header[i])) {
                db.add_metric(id, header[i], R(std::stod(r[i])));
            }
        }
        ++id;
    }
    const kernel_table csv = read_kernel_details_file(path);
    const kernel_table t = read_msprof_db(db.src).table;
    REQUIRE(csv.skipped_count == 0);
    REQUIRE(t.skipped_count == 0);
    REQUIRE(t.rows.size() == csv.rows.size());
    REQUIRE(t.rows.size() == 191);
    const auto same = [](const auto& a, const auto& b, auto unit) {
        if (a.has_value() != b.has_value()) return false;
        return !a || std::abs(a->in(unit)-b->in(unit)) <= 1e-9 * std::abs(a->in(unit)) + 1e-12;
    };
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const kernel_row& a = csv.rows[i];
        const kernel_row& b = t.rows[i];
        INFO("row ", i, " ", a.name);
        CHECK(a.name == b.name);
        CHECK(a.op_type == b.op_type);
        CHECK(a.task_text == b.task_text);
        CHECK(a.task == b.task);
        CHECK(a.start == b.start);
        CHECK(same(a.task_duration, b.task_duration, units::us));
        CHECK(same(a.wait, b.wait, units::us));
        CHECK(a.block_dim == b.block_dim);
        CHECK(a.mix_block_dim == b.mix_block_dim);
        CHECK(a.input_shapes == b.input_shapes);
        CHECK(a.input_types == b.input_types);
        CHECK(a.input_formats == b.input_formats);
        CHECK(a.output_shapes == b.output_shapes);
        CHECK(a.output_types == b.output_types);
        CHECK(a.output_formats == b.output_formats);
        CHECK(a.aic_total_cycles == b.aic_total_cycles);
        CHECK(a.aiv_total_cycles == b.aiv_total_cycles);
        CHECK(same(a.aicore_time, b.aicore_time, units::us));
        CHECK(same(a.aiv_time, b.aiv_time, units::us));
        CHECK(a.aic_mac_ratio == b.aic_mac_ratio);
        CHECK(a.aic_mte2_ratio == b.aic_mte2_ratio);
        CHECK(a.aiv_vec_ratio == b.aiv_vec_ratio);
        CHECK(a.aiv_mte3_ratio == b.aiv_mte3_ratio);
        CHECK(a.cube_utilization_pct == b.cube_utilization_pct);
        REQUIRE(a.notes.size() == b.notes.size());
        for (std::size_t k = 0; k < a.notes.size(); ++k) CHECK(a.notes[k].kind == b.notes[k].kind);
    }
}

TEST_CASE("msprof db: damaged cells skip their op row, listed with table, row and reason") {
    SUBCASE("text where a start time belongs") {
        fake_db db = two_ops();
        db.task().rows[0][0] = T("soon");
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.rows.size() == 1);
        CHECK(t.rows[0].line == 3);
        REQUIRE(t.skipped_count == 1);
        CHECK(t.skipped[0].source == "fake.db:TASK");
        CHECK(t.skipped[0].line == 1);
        CHECK(t.skipped[0].reason ==
              "text, not an integer in column 'startNs': op row globalTaskId 7 left out");
        CHECK(has(describe(t.skipped[0]), "fake.db:TASK:1: text, not an integer"));
        CHECK(has(t.skipped[0].excerpt, "soon,"));
    }
    SUBCASE("a negative start: not a timestamp, as in a CSV") {
        // A copy of a real export with one task's startNs -100, endNs -50 once gave a span of
        // 1.7e15 us and a host_bound finding.
        fake_db db = two_ops();
        db.task().rows[0][0] = I(-100);
        db.task().rows[0][1] = I(-50);
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.rows.size() == 1);
        CHECK(t.rows[0].line == 3);
        REQUIRE(t.skipped_count == 1);
        CHECK(t.skipped[0].source == "fake.db:TASK");
        CHECK(t.skipped[0].reason ==
              "negative, not a timestamp in nanoseconds in column "
              "'startNs': op row globalTaskId 7 left out");
        // 0 is a timestamp (the epoch), as "0" is in a CSV.
        fake_db zero = two_ops();
        zero.task().rows[0][0] = I(0);
        zero.task().rows[0][1] = I(31'250);
        CHECK(read_msprof_db(zero.src).table.skipped_count == 0);
    }
    SUBCASE("an end before the start") {
        fake_db db = two_ops();
        db.task().rows[1][1] = I(1);
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.skipped_count == 1);
        CHECK(has(t.skipped[0].reason, "endNs before startNs in column 'endNs'"));
        CHECK(t.rows.size() == 1);
    }
    SUBCASE("a string id STRING_IDS lacks") {
        fake_db db = two_ops();
        db.compute().rows[1][5] = I(99999);  // opType of the Add
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.skipped_count == 1);
        CHECK(t.skipped[0].source == "fake.db:COMPUTE_TASK_INFO");
        CHECK(t.skipped[0].line == 2);
        CHECK(t.skipped[0].reason == "string id 99999 not in STRING_IDS in column 'opType'");
        REQUIRE(t.rows.size() == 1);
        CHECK(t.rows[0].name == "mm");
    }
    SUBCASE("a negative PMU value and a metric given twice") {
        fake_db db = two_ops();
        db.add_metric(7, "aic_mac_ratio", R(0.5));
        db.add_metric(3, "aiv_vec_ratio", R(-1.0));
        const kernel_table t = read_msprof_db(db.src).table;
        CHECK(t.rows.empty());
        REQUIRE(t.skipped_count == 2);
        CHECK(t.skipped[0].source == "fake.db:TASK_PMU_INFO");
        CHECK(t.skipped[0].line == 10);
        CHECK(has(t.skipped[0].reason, "metric aic_mac_ratio given twice"));
        CHECK(has(t.skipped[1].reason, "negative value in column 'value'"));
        CHECK(has(t.skipped[1].reason, "op row globalTaskId 3 left out"));
    }
    SUBCASE("PMU values past their range: a share, a time, cycles; a task over a day") {
        fake_db db = two_ops();
        db.add_metric(7, "aiv_vec_ratio", R(7.5));
        db.add_metric(3, "aic_total_cycles", R(2e20));
        const kernel_table t = read_msprof_db(db.src).table;
        CHECK(t.rows.empty());
        REQUIRE(t.skipped_count == 2);
        CHECK(has(t.skipped[0].reason, "a share above 1 (metric aiv_vec_ratio)"));
        CHECK(has(t.skipped[1].reason, "more cycles than 65536 cores at 10 GHz run in a day"));
        fake_db day = two_ops();
        day.task().rows[1][0] = I(1000);                                  // startNs
        day.task().rows[1][1] = I(std::int64_t{1000 + 100000000000000});  // 27.8 h later
        const kernel_table d = read_msprof_db(day.src).table;
        REQUIRE(d.skipped_count == 1);
        CHECK(has(d.skipped[0].reason, "a time over a day (86400000000 us) after startNs"));
    }
    SUBCASE("an op type NULL or empty skips its row, as an empty Type does in a CSV") {
        fake_db db = two_ops();
        db.compute().rows[1][5] = db.str("NULL");
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.skipped_count == 1);
        CHECK(t.skipped[0].reason == "no op type in column 'opType'");
        REQUIRE(t.rows.size() == 1);
        CHECK(t.rows[0].name == "mm");
    }
    SUBCASE("an op with no TASK row, a globalTaskId given twice, a NULL where one is required") {
        fake_db db = two_ops();
        db.task().rows.erase(db.task().rows.begin());  // the MatMul's
        db.compute().rows.push_back(db.compute().rows[1]);
        db.pmu().rows.push_back({null, db.str("aic_mac_ratio"), R(0.1)});
        const kernel_table t = read_msprof_db(db.src).table;
        REQUIRE(t.rows.size() == 1);
        CHECK(t.rows[0].line == 3);
        REQUIRE(t.skipped_count == 3);
        CHECK(t.skipped[0].reason ==
              "globalTaskId given twice (the first is kept) in column 'globalTaskId'");
        CHECK(t.skipped[1].reason == "NULL where a value is required in column 'globalTaskId'");
        CHECK(t.skipped[2].source == "fake.db:COMPUTE_TASK_INFO");
        CHECK(t.skipped[2].line == 1);
        CHECK(has(t.skipped[2].reason, "globalTaskId 7 has no TASK row"));
    }
    SUBCASE("damaged chip evidence is listed and costs no op row") {
        fake_db db = two_ops();
        db.src.add("NPU_INFO", {"id", "name"}).rows = {{I(0), I(910)}, {I(1), T("Ascend910B2")}};
        db.src.add("AICORE_FREQ", {"deviceId", "timestampNs", "freq"}).rows = {
            {I(0), I(1), I(0)}, {I(0), I(2), I(1800)}};
        const msprof_db_table out = read_msprof_db(db.src);
        CHECK(out.table.rows.size() == 2);
        REQUIRE(out.table.skipped_count == 2);
        CHECK(describe(out.table.skipped[0]) ==
              "fake.db:NPU_INFO:1: an integer, not a chip name in column 'name': \"0,910\"");
        CHECK(out.table.skipped[1].source == "fake.db:AICORE_FREQ");
        CHECK(out.info.npu_names == std::map<int, std::string>{{1, "Ascend910B2"}});
        REQUIRE(out.info.aicore_clock.size() == 1);
        CHECK(out.info.aicore_clock[0].clock.in(units::MHz) == 1800);
    }
    SUBCASE("strict: the first damaged row is an error naming the table and row") {
        fake_db db = two_ops();
        db.task().rows[1][2] = I(-1);
        kernel_reader_options o;
        o.strict = true;
        CHECK_THROWS_WITH_AS((void)read_msprof_db(db.src, o),
                             doctest::Contains("fake.db:TASK:2: negative count in column "
                                               "'deviceId'"),
                             perfcast::parse_error);
    }
    SUBCASE("max_skipped_listed bounds the list, not the count") {
        fake_db db = two_ops();
        for (int i = 0; i < 5; ++i) db.strings().rows.push_back({T("x"), T("y")});
        kernel_reader_options o;
        o.max_skipped_listed = 2;
        const kernel_table t = read_msprof_db(db.src, o).table;
        CHECK(t.skipped_count == 5);
        CHECK(t.skipped.size() == 2);
        CHECK(t.rows.size() == 2);
    }
}

TEST_CASE("msprof db: missing tables and columns") {
    SUBCASE("no TASK: not an export") {
        memory_db_source src("x.db");
        src.add("STRING_IDS", {"id", "value"});
        src.add("COMPUTE_TASK_INFO", {"globalTaskId", "opType", "taskType"});
        CHECK_THROWS_WITH_AS((void)read_msprof_db(src), doctest::Contains("no table TASK"),
                             perfcast::parse_error);
    }
    SUBCASE("a required column missing names the table and lists its columns") {
        fake_db db = two_ops();
        db.src.add("TASK", {"startNs", "globalTaskId"});
        CHECK_THROWS_WITH_AS((void)read_msprof_db(db.src),
                             doctest::Contains("TASK has no column endNs"), perfcast::parse_error);
    }
    SUBCASE("optional columns missing are listed and read as not recorded; no PMU table") {
        memory_db_source src("old.db");
        src.add("STRING_IDS", {"id", "value"}).rows = {{I(1), T("Cast")}, {I(2), T("AI_CORE")}};
        src.add("COMPUTE_TASK_INFO", {"globalTaskId", "opType", "taskType", "block_dim"}).rows = {
            {I(0), I(1), I(2), I(8)}};
        src.add("TASK", {"globalTaskId", "startNs", "endNs"}).rows = {{I(0), I(10), I(20)}};
        const msprof_db_table out = read_msprof_db(src);
        REQUIRE(out.table.rows.size() == 1);
        CHECK_FALSE(out.table.rows[0].block_dim.has_value());  // block_dim is not blockDim
        CHECK_FALSE(out.table.rows[0].device.has_value());
        CHECK_FALSE(out.info.has_pmu);
        CHECK(std::find(out.info.absent_columns.begin(), out.info.absent_columns.end(),
                        "COMPUTE_TASK_INFO.blockDim") != out.info.absent_columns.end());
        CHECK(std::find(out.info.absent_columns.begin(), out.info.absent_columns.end(),
                        "TASK.deviceId") != out.info.absent_columns.end());
        CHECK_FALSE(out.table.header.has(kernel_column::block_dim));
    }
}

TEST_CASE("msprof db: rows of several devices need --device, as in a CSV") {
    fake_db db = two_ops();
    db.task().rows[1][2] = I(5);  // the Add ran on device 5
    CHECK_THROWS_WITH_AS((void)read_msprof_db(db.src),
                         doctest::Contains("rows of 2 devices (device 0: 1 rows, device 5: 1 "
                                           "rows): choose one (--device N)"),
                         perfcast::parse_error);
    kernel_reader_options o;
    o.device = 5;
    const kernel_table t = read_msprof_db(db.src, o).table;
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0].name == "add");
    o.device = 4;
    CHECK_THROWS_WITH_AS((void)read_msprof_db(db.src, o), doctest::Contains("no row of device 4"),
                         perfcast::parse_error);
}

TEST_CASE("msprof db: the chip evidence names a preset only when it names one model") {
    msprof_db_info info;
    info.npu_names = {{0, "Ascend910B"}};
    info.aicore_clock = {{0, 1, perfcast::frequency{1800.0, units::MHz}},
                         {0, 2, perfcast::frequency{1800.0, units::MHz}}};
    chip_evidence e = db_chip_evidence(info);
    CHECK(e.text == "NPU_INFO: Ascend910B; AICORE_FREQ: 1800 MHz (2 samples)");
    CHECK(e.preset == nullptr);
    CHECK(e.why_no_preset ==
          "NPU_INFO's 'Ascend910B' does not say which model; at 1800 MHz it may be ascend910b2, "
          "ascend910b3");

    info.npu_names = {{0, "Ascend910B2"}, {1, "Ascend910B3"}};
    e = db_chip_evidence(info, {0});
    REQUIRE(e.preset != nullptr);
    CHECK(e.preset->name == "ascend910b2");
    e = db_chip_evidence(info);
    CHECK(e.preset == nullptr);
    CHECK(e.why_no_preset == "NPU_INFO names 2 chips");

    const chip_evidence none = db_chip_evidence(msprof_db_info{});
    CHECK(none.text.empty());
    CHECK(none.preset == nullptr);
}

TEST_CASE("sqlite_source.hpp: the message of a build without SQLite names the Debian package") {
    const std::string m = perfcast::cli::sqlite_missing_message("run/msprof_1.db");
    CHECK(has(m, "'run/msprof_1.db' is an SQLite export"));
    CHECK(has(m, "built without SQLite"));
    CHECK(has(m, "libsqlite3-dev"));
    if (!perfcast::cli::have_sqlite) {
        CHECK(perfcast_test::message_of([] { (void)perfcast::cli::open_sqlite("x.db"); }) ==
              perfcast::cli::sqlite_missing_message("x.db"));
    }
}

}  // namespace test_msprof_db
