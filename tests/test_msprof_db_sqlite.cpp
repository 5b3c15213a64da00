// The real SQLite exports of tests/data/profiles/real (SOURCES.md #3 and #5) read through the
// command's SQLite row source (examples/perfcast/sqlite_source.cpp), with every expectation taken
// from the database itself by SQL (the test's own queries, never the reader's output), and the
// command's `report` on them. Built without SQLite, the same commands must fail naming the Debian
// package libsqlite3-dev.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/profile/msprof_db.hpp>
#include <perfcast/profile/report.hpp>

#include "../examples/perfcast/commands.hpp"
#include "../examples/perfcast/sqlite_source.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#if PERFCAST_HAVE_SQLITE
#include <sqlite3.h>
#endif

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_msprof_db_sqlite {

using namespace perfcast::profile;
namespace fs = std::filesystem;
namespace units = perfcast::units;
namespace cli = perfcast::cli;
using perfcast_test::run_command;

namespace {

const fs::path real = PERFCAST_SOURCE_DIR "/tests/data/profiles/real";
const fs::path torch_run = real / "torchnpu_2025_db_level1_rank0_ascend_pt";
const fs::path torch_db = torch_run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db";
const fs::path msprof_db = real / "msinsight_misc" / "msprof_0.db";

using perfcast_test::has;

#if PERFCAST_HAVE_SQLITE
std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

/// The test's own read-only connection, for expectations by SQL.
class sql {
public:
    explicit sql(const fs::path& p) {
        const std::string uri = "file:" + p.generic_string() + "?mode=ro&immutable=1";
        REQUIRE(sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                nullptr) == SQLITE_OK);
    }
    ~sql() { sqlite3_close(db_); }
    sql(const sql&) = delete;
    sql& operator=(const sql&) = delete;

    /// Each row of `q` as doubles (NULL: NaN).
    std::vector<std::vector<double>> rows(const std::string& q) {
        sqlite3_stmt* s = nullptr;
        REQUIRE_MESSAGE(sqlite3_prepare_v2(db_, q.c_str(), -1, &s, nullptr) == SQLITE_OK,
                        sqlite3_errmsg(db_));
        std::vector<std::vector<double>> out;
        while (sqlite3_step(s) == SQLITE_ROW) {
            std::vector<double> r;
            for (int i = 0; i < sqlite3_column_count(s); ++i) {
                r.push_back(sqlite3_column_type(s, i) == SQLITE_NULL ? std::nan("")
                                                                     : sqlite3_column_double(s, i));
            }
            out.push_back(std::move(r));
        }
        sqlite3_finalize(s);
        return out;
    }
    double number(const std::string& q) { return rows(q).at(0).at(0); }
    /// (text, count) rows of a two-column query.
    std::map<std::string, double> counts(const std::string& q) {
        sqlite3_stmt* s = nullptr;
        REQUIRE(sqlite3_prepare_v2(db_, q.c_str(), -1, &s, nullptr) == SQLITE_OK);
        std::map<std::string, double> out;
        while (sqlite3_step(s) == SQLITE_ROW) {
            const auto* t = sqlite3_column_text(s, 0);
            out[t ? reinterpret_cast<const char*>(t) : ""] = sqlite3_column_double(s, 1);
        }
        sqlite3_finalize(s);
        return out;
    }

private:
    sqlite3* db_ = nullptr;
};

/// A metric of the task as a subquery.
std::string metric(std::string_view name) {
    return "(SELECT p.value FROM TASK_PMU_INFO p JOIN STRING_IDS s ON s.id = p.name WHERE "
           "p.globalTaskId = c.globalTaskId AND s.value = '" +
           std::string(name) + "')";
}
#endif

}  // namespace

#if PERFCAST_HAVE_SQLITE

TEST_CASE("sqlite: the real torch_npu export, every expectation from the database's own tables") {
    const auto before = listing(torch_db.parent_path());
    const auto src = cli::open_sqlite(torch_db.string());
    const msprof_db_table out = read_msprof_db(*src);
    const kernel_table& t = out.table;
    sql q(torch_db);

    // One row per COMPUTE_TASK_INFO row joined to its TASK row (187), nothing skipped.
    const double joined =
        q.number("SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)");
    CHECK(joined == 187);
    CHECK(static_cast<double>(t.rows.size()) == joined);
    CHECK(t.skipped_count == 0);
    CHECK(static_cast<double>(out.info.other_tasks) ==
          q.number("SELECT count(*) FROM TASK") - joined);

    // Rows per task type (the label, as written) and the total time.
    const auto by_type = q.counts(
        "SELECT s.value, count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId) "
        "JOIN STRING_IDS s ON s.id = c.taskType GROUP BY 1");
    std::map<std::string, double> mine;
    double total_ns = 0;
    for (const kernel_row& r : t.rows) {
        ++mine[r.task_text];
        total_ns += r.task_duration->in(units::ns);
    }
    CHECK(mine == by_type);
    CHECK(total_ns == doctest::Approx(q.number(
                          "SELECT sum(t.endNs - t.startNs) FROM COMPUTE_TASK_INFO c JOIN TASK t "
                          "USING (globalTaskId)")));

    // Per row, by globalTaskId: start, block dim, cycles and ratios as stored; aicore_time from
    // aic_total_time in ns.
    const auto rows = q.rows("SELECT c.globalTaskId, t.startNs, c.blockDim, " +
                             metric("aic_total_cycles") + ", " + metric("aiv_total_cycles") + ", " +
                             metric("aic_mac_ratio") + ", " + metric("aiv_vec_ratio") + ", " +
                             metric("aic_total_time") + ", " + metric("aiv_total_time") +
                             " FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)");
    std::map<std::size_t, const kernel_row*> by_id;
    for (const kernel_row& r : t.rows) by_id[r.line] = &r;
    REQUIRE(by_id.size() == rows.size());
    std::size_t with_pmu = 0;
    for (const auto& x : rows) {
        const kernel_row& r = *by_id.at(static_cast<std::size_t>(x[0]));
        INFO("globalTaskId ", x[0], " ", r.name);
        CHECK(static_cast<double>(r.start->ns) == x[1]);
        CHECK(r.block_dim == static_cast<int>(x[2]));
        if (std::isnan(x[3])) {
            CHECK_FALSE(r.aic_total_cycles.has_value());
            continue;
        }
        ++with_pmu;
        CHECK(r.aic_total_cycles->in(units::cycle) == x[3]);
        CHECK(r.aiv_total_cycles->in(units::cycle) == x[4]);
        CHECK(*r.aic_mac_ratio == x[5]);
        CHECK(*r.aiv_vec_ratio == x[6]);
        CHECK(r.aicore_time->in(units::ns) == doctest::Approx(x[7]));
        CHECK(r.aiv_time->in(units::ns) == doctest::Approx(x[8]));
    }
    CHECK(with_pmu == 185);  // two DSA_SQE tasks have no PMU rows

    // The unit of *_total_time (msprof_db.hpp db_time_metrics): cycles / (AICORE_FREQ x blockDim)
    // in ns, times the rounds a block dim above the core count takes (910B2: 24 cube, 48
    // vector cores).
    const double mhz = q.number("SELECT min(freq) FROM AICORE_FREQ");
    CHECK(mhz == q.number("SELECT max(freq) FROM AICORE_FREQ"));
    std::size_t timed = 0;
    for (const kernel_row& r : t.rows) {
        if (!r.aic_total_cycles || !r.block_dim || *r.block_dim == 0) continue;
        const auto check = [&](double cycles, double ns, int cores) {
            if (cycles == 0) return;
            const double rounds = std::ceil(static_cast<double>(*r.block_dim) / cores);
            INFO(r.name, " block dim ", *r.block_dim);
            CHECK(ns == doctest::Approx(cycles * 1000.0 / (mhz * *r.block_dim) * rounds));
            ++timed;
        };
        check(r.aic_total_cycles->in(units::cycle), r.aicore_time->in(units::ns), 24);
        check(r.aiv_total_cycles->in(units::cycle), r.aiv_time->in(units::ns), 48);
    }
    CHECK(timed >= 185);

    // Cube utilization recomputed for the 910B2 (the export has no cube_utilization metric to
    // compare with): the SQL of the same formula on the stored columns.
    const auto util = q.rows("SELECT c.globalTaskId, 100.0 * " + metric("aic_total_cycles") +
                             " / (" + std::to_string(mhz) +
                             "e6 * 24 * (t.endNs - t.startNs) * 1e-9) FROM COMPUTE_TASK_INFO c "
                             "JOIN TASK t USING (globalTaskId)");
    for (const auto& x : util) {
        if (std::isnan(x[1])) continue;
        const auto u = recomputed_cube_utilization_pct(*by_id.at(static_cast<std::size_t>(x[0])),
                                                       perfcast::chips::ascend910b2);
        REQUIRE(u.has_value());
        CHECK(*u == doctest::Approx(x[1]));
    }

    // The engine from the cycle counters: AI_CORE rows with vector cycles only.
    const double vector_as_core = q.number(
        "SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.taskType WHERE "
        "s.value = 'AI_CORE' AND " +
        metric("aic_total_cycles") + " = 0 AND " + metric("aiv_total_cycles") + " > 0");
    std::size_t noted = 0;
    for (const kernel_row& r : t.rows) noted += r.has_note(note_kind::engine_from_cycles) ? 1U : 0U;
    CHECK(static_cast<double>(noted) == vector_as_core);

    // Chip evidence, and metrics no CSV column reads.
    CHECK(out.info.npu_names == std::map<int, std::string>{{0, "Ascend910B"}});
    CHECK(out.info.aicore_clock.size() == 3);
    CHECK(db_chip_evidence(out.info).text ==
          "NPU_INFO: Ascend910B; AICORE_FREQ: 1800 MHz (3 samples)");
    CHECK(std::find(t.header.not_read.begin(), t.header.not_read.end(), "aic_mac_time") !=
          t.header.not_read.end());
    // Opened read-only and immutable: nothing new beside the database (no -wal, no -shm).
    CHECK(listing(torch_db.parent_path()) == before);
}

TEST_CASE("sqlite: the real msprof export (no PMU tables, 8 NPUs, rows of device 2)") {
    const auto src = cli::open_sqlite(msprof_db.string());
    const msprof_db_table out = read_msprof_db(*src);
    sql q(msprof_db);
    CHECK(static_cast<double>(out.table.rows.size()) ==
          q.number("SELECT count(*) FROM COMPUTE_TASK_INFO c JOIN TASK t USING (globalTaskId)"));
    CHECK(out.table.rows.size() == 11);
    CHECK(out.table.skipped_count == 0);
    CHECK_FALSE(out.info.has_pmu);
    CHECK(out.info.npu_names.size() == 8);
    for (const kernel_row& r : out.table.rows) {
        CHECK(r.device == 2);
        CHECK_FALSE(r.has_note(note_kind::bad_shape));
        if (r.op_type == "MemSet") {  // its shapes and dtypes are stored as the text NULL
            CHECK(r.input_shapes.empty());
            CHECK(r.input_types.empty());
        }
    }
    CHECK(db_chip_evidence(out.info, {2}).text == "NPU_INFO: Ascend910B");
}

TEST_CASE("sqlite: a file that is not a database, and one that does not exist") {
    const perfcast_test::scratch_dir dir("sqlite_bad");
    const fs::path bad = dir.path / "msprof_1.db";
    std::ofstream(bad) << "Type,Accelerator Core,Duration(us)\n";
    CHECK(has(perfcast_test::message_of([&] { (void)cli::open_sqlite(bad.string()); }),
              "msprof_1.db: SQLite: file is not a database"));
    CHECK(has(
        perfcast_test::message_of([&] { (void)cli::open_sqlite((dir.path / "none.db").string()); }),
        "none.db: SQLite: no such file"));
}

TEST_CASE("cli: report reads the real .db, a folder holding only it, and asks for --chip") {
    const auto r = run_command(cli::report_command,
                               {torch_db.string(), "--chip", "ascend910b2", "--top", "3"});
    CHECK(r.status == 0);
    CHECK(has(r.out, "msprof SQLite export, 187 rows"));
    CHECK(has(r.err, "NPU_INFO: Ascend910B; AICORE_FREQ: 1800 MHz (3 samples)"));

    // 'Ascend910B' does not say which 910B: --chip is needed, and the message says why.
    const auto no_chip = run_command(cli::report_command, {torch_db.string()});
    CHECK(no_chip.status == 2);
    CHECK(has(no_chip.err,
              "needs --chip C or --chip-ini FILE: NPU_INFO's 'Ascend910B' does not "
              "say which model; at 1800 MHz it may be ascend910b2, ascend910b3"));

    // The run folder: discovery finds the export (the folder has no CSV).
    const auto folder = run_command(cli::report_command,
                                    {torch_run.string(), "--chip", "ascend910b2", "--top", "3"});
    CHECK(folder.status == 0);
    CHECK(has(folder.err,
              "(torch_npu: ascend_pytorch_profiler_0.db (SQLite export), rank 0 from "
              "profiler_info_0.json)"));
    const auto body = [](const std::string& s) { return s.substr(s.find('\n')); };
    CHECK(body(folder.out) == body(r.out));

    // A database whose NPU_INFO names a model: that preset, said on stderr (a copy of the real
    // export with its NPU_INFO name changed by SQL).
    const perfcast_test::scratch_dir dir("sqlite_named_chip");
    const fs::path named = dir.path / "ascend_pytorch_profiler_0.db";
    fs::copy_file(torch_db, named);
    {
        sqlite3* w = nullptr;
        REQUIRE(sqlite3_open(named.string().c_str(), &w) == SQLITE_OK);
        CHECK(sqlite3_exec(w, "UPDATE NPU_INFO SET name = 'Ascend910B2'", nullptr, nullptr,
                           nullptr) == SQLITE_OK);
        sqlite3_close(w);
    }
    const auto chosen = run_command(cli::report_command, {named.string(), "--top", "3"});
    CHECK(chosen.status == 0);
    CHECK(has(chosen.err, "perfcast: chip ascend910b2 as the database names it"));
    CHECK(body(chosen.out) == body(r.out));

    // A clock other than the database's is noted.
    const auto b1 = run_command(cli::report_command, {torch_db.string(), "--chip", "ascend910b1"});
    CHECK(b1.status == 0);
    CHECK(has(b1.err, "AI core clock (AICORE_FREQ) was 1800 MHz; chip"));
}

#else

TEST_CASE("cli: built without SQLite, a .db is refused naming the Debian package") {
    const auto r = run_command(cli::report_command, {torch_db.string(), "--chip", "ascend910b2"});
    CHECK(r.status == 1);
    CHECK(has(r.err, "built without SQLite"));
    CHECK(has(r.err, "libsqlite3-dev"));
    const auto folder =
        run_command(cli::report_command, {torch_run.string(), "--chip", "ascend910b2"});
    CHECK(folder.status == 1);
    CHECK(has(folder.err, "libsqlite3-dev"));
    const auto msprof = run_command(cli::report_command, {msprof_db.string()});
    CHECK(msprof.status == 1);
    CHECK(has(msprof.err, "'" + msprof_db.string() + "' is an SQLite export"));
}

#endif

}  // namespace test_msprof_db_sqlite
