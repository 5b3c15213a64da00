// Tests for perfcast/profile/discover.hpp and the command's PROFILE argument: folders as the
// profilers write them (the real ones under tests/data/profiles/real, and layouts rebuilt from
// them in a scratch folder: several ranks, msprof device folders, slices, the raw msprof output
// inside a torch_npu folder), standard input, and what is refused.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/profile/discover.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_discover {

using namespace perfcast::profile;
namespace fs = std::filesystem;
using perfcast_test::run_command;
using perfcast_test::scratch_dir;

namespace {

const fs::path real = PERFCAST_SOURCE_DIR "/tests/data/profiles/real";
const fs::path cann70_rank0 = real / "torchnpu_2023_cann70_rank0";
const fs::path cann70_rank1 = real / "torchnpu_2023_cann70_rank1";
const fs::path msprof_out = real / "msprof_helix_2026_PROF" / "mindstudio_profiler_output";

std::string text_of(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

using perfcast_test::has;

const passed_over* not_taken(const discovery& d, std::string_view file_name) {
    for (const auto& n : d.not_taken)
        if (n.path.filename() == file_name) return &n;
    return nullptr;
}

}  // namespace

TEST_CASE("discover: the real outputs folder, every op table and every CSV passed over") {
    const discovery d = discover_profiles(real);
    // Op tables: one kernel_details.csv per torch_npu folder that has one (5), the msprof
    // folder's op_summary and the older-layout op_summary; the SQLite exports of the two runs
    // that have no CSV (the torch_npu db run, msinsight_misc's msprof_0.db).
    std::size_t torch = 0;
    std::size_t msprof = 0;
    std::size_t databases = 0;
    for (const auto& s : d.sources) {
        REQUIRE(s.files.size() == 1);
        if (s.format == source_format::sqlite) {
            ++databases;
            const std::string n = s.files[0].filename().string();
            CHECK((n == "ascend_pytorch_profiler_0.db" || n == "msprof_0.db"));
            CHECK(s.tool == (n == "msprof_0.db" ? "msprof" : "torch_npu"));
        } else if (s.tool == "torch_npu") {
            ++torch;
            CHECK(s.files[0].filename() == "kernel_details.csv");
        } else {
            ++msprof;
            CHECK(s.tool == "msprof");
            CHECK(s.files[0].filename().string().rfind("op_summary", 0) == 0);
        }
    }
    CHECK(torch == 5);
    CHECK(msprof == 2);
    CHECK(databases == 2);
    // analysis.db holds statistics: passed over by name.
    const passed_over* analysis = not_taken(d, "analysis.db");
    REQUIRE(analysis != nullptr);
    CHECK(has(analysis->reason, "not an op database by its name"));
    // Ranks come from profiler_info_<N>.json beside ASCEND_PROFILER_OUTPUT; the helix folder
    // has none.
    for (const auto& s : d.sources) {
        const std::string p = s.files[0].generic_string();
        if (has(p, "cann70_rank1")) CHECK(s.rank == 1);
        if (has(p, "cann70_rank0")) CHECK(s.rank == 0);
        if (has(p, "helix_2026_standalone")) CHECK_FALSE(s.rank.has_value());
    }
    // Statistics files are passed over by name, with the reason.
    const passed_over* stat = not_taken(d, "op_statistic_20260511093035.csv");
    REQUIRE(stat != nullptr);
    CHECK(has(stat->reason, "not an op table"));
    CHECK(not_taken(d, "api_statistic.csv") != nullptr);
    CHECK(not_taken(d, "step_trace_time.csv") != nullptr);
}

TEST_CASE("discover: layouts rebuilt from real files") {
    const scratch_dir dir("discover");

    SUBCASE("a folder of two ranks: two sources, rank from profiler_info_N.json") {
        fs::copy(cann70_rank0, dir.path / "r0", fs::copy_options::recursive);
        fs::copy(cann70_rank1, dir.path / "r1", fs::copy_options::recursive);
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 2);
        CHECK(d.sources[0].rank == 0);
        CHECK(d.sources[1].rank == 1);
    }
    SUBCASE("msprof's raw output inside a torch_npu folder is the same tasks: passed over") {
        const fs::path run = dir.path / "host_123_ascend_pt";
        fs::copy(cann70_rank0, run, fs::copy_options::recursive);
        fs::create_directories(run / "PROF_000001_x" / "mindstudio_profiler_output");
        fs::copy_file(msprof_out / "op_summary_20260511093035.csv",
                      run / "PROF_000001_x" / "mindstudio_profiler_output" / "op_summary_1.csv");
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 1);
        CHECK(d.sources[0].tool == "torch_npu");
        const passed_over* raw = not_taken(d, "op_summary_1.csv");
        REQUIRE(raw != nullptr);
        CHECK(has(raw->reason, "inside a torch_npu folder"));
    }
    SUBCASE("msprof's device_N folders: one source per device") {
        for (int dev : {0, 3}) {
            const fs::path sum =
                dir.path / "PROF_1" / ("device_" + std::to_string(dev)) / "summary";
            fs::create_directories(sum);
            fs::copy_file(msprof_out / "op_summary_20260511093035.csv", sum / "op_summary_0_1.csv");
        }
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 2);
        CHECK(d.sources[0].device == 0);
        CHECK(d.sources[1].device == 3);
        CHECK(has(d.sources[1].evidence, "device 3 from device_3"));
        // A table without a Device_id column in device_3: --device 3 names its folder, every row
        // is that device's; another device is not its own (its rows are not the device asked).
        const fs::path bare = dir.path / "PROF_2" / "device_3" / "summary";
        fs::create_directories(bare);
        std::ofstream(bare / "op_summary_0_1.csv")
            << "OP Type,Task Type,Task Duration(us)\nAdd,AI_CORE,1\nMul,AI_CORE,2\n";
        const discovery two = discover_profiles(dir.path / "PROF_2");
        REQUIRE(two.sources.size() == 1);
        kernel_reader_options o;
        o.device = 3;
        CHECK(read_profile_source(two.sources[0], o).rows.size() == 2);
        o.device = 4;
        CHECK_THROWS_WITH_AS((void)read_profile_source(two.sources[0], o),
                             doctest::Contains("device 4 asked for, but the table is device 3's"),
                             perfcast::parse_error);
        // The same file named itself: its folder still says its device.
        const discovery named = discover_profiles(bare / "op_summary_0_1.csv");
        REQUIRE(named.sources.size() == 1);
        CHECK(named.sources[0].device == 3);
        o.device = 3;
        CHECK(read_profile_source(named.sources[0], o).rows.size() == 2);
        o.device = 4;
        CHECK_THROWS_AS((void)read_profile_source(named.sources[0], o), perfcast::parse_error);
    }
    SUBCASE("sliced op_summary: one table, slices in slice order (2 before 10)") {
        // The real op_summary cut into four slices, each with the header, as msprof slices.
        const std::string text = text_of(msprof_out / "op_summary_20260511093035.csv");
        std::vector<std::string> lines;
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);) lines.push_back(l + "\n");
        REQUIRE(lines.size() == 10);  // header + 9 rows
        const int index[] = {0, 1, 2, 10};
        const std::size_t from[] = {1, 3, 5, 7};
        const std::size_t to[] = {3, 5, 7, 10};
        for (int k = 0; k < 4; ++k) {
            std::string part = lines[0];
            for (std::size_t i = from[k]; i < to[k]; ++i) part += lines[i];
            std::ofstream(dir.path / ("op_summary_7_slice_" + std::to_string(index[k]) + ".csv"),
                          std::ios::binary)
                << part;
        }
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 1);
        REQUIRE(d.sources[0].files.size() == 4);
        CHECK(d.sources[0].files[2].filename() == "op_summary_7_slice_2.csv");
        CHECK(d.sources[0].files[3].filename() == "op_summary_7_slice_10.csv");
        const kernel_table sliced = read_profile_source(d.sources[0]);
        const kernel_table whole = parse_kernel_details(text, "whole.csv", kernel_reader_options{});
        REQUIRE(sliced.rows.size() == whole.rows.size());
        for (std::size_t i = 0; i < whole.rows.size(); ++i) {
            CHECK(sliced.rows[i].name == whole.rows[i].name);
            CHECK(sliced.rows[i].start == whole.rows[i].start);
        }
    }
    SUBCASE("a folder with no op table says what it looked at") {
        fs::copy_file(msprof_out / "task_time_20260511093035.csv", dir.path / "task_time_1.csv");
        const discovery d = discover_profiles(dir.path);
        CHECK(d.sources.empty());
        REQUIRE(d.not_taken.size() == 1);
    }
    SUBCASE("an op_summary-named file that is not an op table is passed over by content") {
        std::ofstream(dir.path / "op_summary_bad.csv") << "a,b\n1,2\n";
        const discovery d = discover_profiles(dir.path);
        CHECK(d.sources.empty());
        const passed_over* bad = not_taken(d, "op_summary_bad.csv");
        REQUIRE(bad != nullptr);
        CHECK(has(bad->reason, "missing required column"));
    }
}

TEST_CASE("discover: SQLite exports, and the CSV preferred when the run wrote both") {
    const scratch_dir dir("discover_db");
    const fs::path torch_db_run = real / "torchnpu_2025_db_level1_rank0_ascend_pt";
    const fs::path db_file = real / "msinsight_misc" / "msprof_0.db";

    SUBCASE("a torch_npu run with kernel_details.csv and its .db: the CSV") {
        const fs::path run = dir.path / "host_1_ascend_pt";
        fs::copy(cann70_rank0, run, fs::copy_options::recursive);
        fs::copy_file(torch_db_run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db",
                      run / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_0.db");
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 1);
        CHECK(d.sources[0].format == source_format::csv);
        const passed_over* db = not_taken(d, "ascend_pytorch_profiler_0.db");
        REQUIRE(db != nullptr);
        CHECK(has(db->reason, "the SQLite export of the run whose CSV"));
        CHECK(has(db->reason, "kernel_details.csv is read"));
    }
    SUBCASE("an msprof PROF_ folder: op_summary preferred to msprof_*.db; alone, the .db") {
        const fs::path prof = dir.path / "PROF_000001_a";
        fs::create_directories(prof / "mindstudio_profiler_output");
        fs::copy_file(msprof_out / "op_summary_20260511093035.csv",
                      prof / "mindstudio_profiler_output" / "op_summary_1.csv");
        fs::copy_file(db_file, prof / "msprof_1.db");
        const fs::path alone = dir.path / "PROF_000002_b";
        fs::create_directories(alone);
        fs::copy_file(db_file, alone / "msprof_2.db");
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 2);
        CHECK(d.sources[0].files[0].filename() == "op_summary_1.csv");
        CHECK(d.sources[1].files[0].filename() == "msprof_2.db");
        CHECK(d.sources[1].format == source_format::sqlite);
        CHECK(d.sources[1].tool == "msprof");
        CHECK(d.sources[1].evidence == "msprof_2.db (SQLite export)");
        REQUIRE(not_taken(d, "msprof_1.db") != nullptr);
        CHECK(has(not_taken(d, "msprof_1.db")->reason, "op_summary_1.csv is read"));
    }
    SUBCASE("msprof's raw .db inside a torch_npu folder is the same tasks") {
        const fs::path run = dir.path / "host_2_ascend_pt";
        fs::copy(torch_db_run, run, fs::copy_options::recursive);
        fs::create_directories(run / "PROF_000001_x");
        fs::copy_file(db_file, run / "PROF_000001_x" / "msprof_9.db");
        const discovery d = discover_profiles(dir.path);
        REQUIRE(d.sources.size() == 1);
        CHECK(d.sources[0].files[0].filename() == "ascend_pytorch_profiler_0.db");
        CHECK(d.sources[0].rank == 0);
        REQUIRE(not_taken(d, "msprof_9.db") != nullptr);
        CHECK(has(not_taken(d, "msprof_9.db")->reason, "inside a torch_npu folder"));
    }
    SUBCASE("a .db named as an export that is not SQLite; a .db given by name") {
        std::ofstream(dir.path / "msprof_3.db") << "not a database\n";
        const discovery d = discover_profiles(dir.path);
        CHECK(d.sources.empty());
        REQUIRE(not_taken(d, "msprof_3.db") != nullptr);
        CHECK(not_taken(d, "msprof_3.db")->reason == "not an SQLite database (no SQLite header)");
        const discovery one = discover_profiles(db_file);
        REQUIRE(one.sources.size() == 1);
        CHECK(one.sources[0].format == source_format::sqlite);
        CHECK(discover_profiles(dir.path / "msprof_3.db").sources[0].format ==
              source_format::csv);  // by content, not by name
    }
    SUBCASE("the library's CSV reading refuses a database, saying what reads it") {
        const discovery one = discover_profiles(db_file);
        CHECK_THROWS_WITH_AS((void)read_profile_source(one.sources[0]),
                             doctest::Contains("is an SQLite export: read it with read_msprof_db"),
                             perfcast::error);
    }
}

TEST_CASE("discover: the slices of one op_summary are one table (devices, steps, headers, gaps)") {
    const scratch_dir dir("discover_slices");
    // msprof's op_summary columns that matter here; each slice has the header, as msprof writes.
    const std::string head = "Device_id,OP Type,Task Type,Task Start Time(us),Task Duration(us)\n";
    const auto slice = [&](const fs::path& folder, int n, const std::string& body,
                           const std::string& header) {
        fs::create_directories(folder);
        std::ofstream(folder / ("op_summary_1_slice_" + std::to_string(n) + ".csv"),
                      std::ios::binary)
            << header << body;
    };
    // Two rows a slice; the device in the first field.
    const auto rows = [](int device, int first_start) {
        std::string b;
        for (int k = 0; k < 2; ++k) {
            b += std::to_string(device) + ",Add,AI_CORE," + std::to_string(first_start + 10 * k) +
                 ",2\n";
        }
        return b;
    };
    const auto one_source = [](const fs::path& folder) {
        const discovery d = discover_profiles(folder);
        REQUIRE(d.sources.size() == 1);
        return d.sources[0];
    };

    SUBCASE("slices of two devices: the 'choose one' error of one file; --device N over all") {
        const fs::path f = dir.path / "two_devices" / "PROF_1" / "mindstudio_profiler_output";
        slice(f, 0, rows(0, 100), head);
        slice(f, 1, rows(1, 200), head);
        const profile_source s = one_source(dir.path / "two_devices");
        REQUIRE(s.files.size() == 2);
        CHECK_THROWS_WITH_AS((void)read_profile_source(s),
                             doctest::Contains("rows of 2 devices (device 0: 2 rows, device 1: 2 "
                                               "rows): choose one (--device N)"),
                             perfcast::parse_error);
        kernel_reader_options o;
        for (int dev : {0, 1}) {
            o.device = dev;
            const kernel_table t = read_profile_source(s, o);
            REQUIRE(t.rows.size() == 2);
            CHECK(t.rows[0].device == dev);
            CHECK(t.rows[1].device == dev);
        }
        o.device = 2;
        CHECK_THROWS_WITH_AS((void)read_profile_source(s, o),
                             doctest::Contains("no row of device 2 (the file has device 0: 2 "
                                               "rows, device 1: 2 rows)"),
                             perfcast::parse_error);
        o.device.reset();
        o.several_devices = true;
        CHECK(read_profile_source(s, o).rows.size() == 4);
        // The command, as the reviewer ran it: the error without --device, each device with.
        namespace cli = perfcast::cli;
        const std::string folder = (dir.path / "two_devices").string();
        const auto both = run_command(cli::report_command, {folder, "--chip", "ascend910b2"});
        CHECK(both.status == 1);
        CHECK(has(both.err, "rows of 2 devices (device 0: 2 rows, device 1: 2 rows): choose one"));
        for (const std::string_view dev : {"0", "1"}) {
            const auto picked =
                run_command(cli::report_command,
                            {folder, "--chip", "ascend910b2", "--device", dev, "--format", "csv"});
            CHECK(picked.status == 0);
            CHECK(has(picked.out, "rows,2,,"));
        }
    }
    SUBCASE("--step over the slices: a step of one slice picked, one of none an error") {
        const std::string steps = "Step Id,OP Type,Task Type,Task Start Time(us),Duration(us)\n";
        const fs::path f = dir.path / "steps" / "PROF_1" / "mindstudio_profiler_output";
        slice(f, 0, "1,Add,AI_CORE,100,2\n1,Mul,AI_CORE,110,2\n", steps);
        slice(f, 1, "2,Add,AI_CORE,200,2\n", steps);
        const profile_source s = one_source(dir.path / "steps");
        kernel_reader_options o;
        o.step = 2;
        const kernel_table t = read_profile_source(s, o);
        REQUIRE(t.rows.size() == 1);
        CHECK(t.rows[0].step == 2);
        o.step = 3;
        CHECK_THROWS_WITH_AS((void)read_profile_source(s, o),
                             doctest::Contains("no row of step 3 (the file has step 1: 2 rows, "
                                               "step 2: 1 rows)"),
                             perfcast::parse_error);
    }
    SUBCASE("missing slice numbers are reported, the rows of the others read") {
        const fs::path f = dir.path / "gap" / "PROF_1" / "mindstudio_profiler_output";
        slice(f, 0, rows(0, 100), head);
        slice(f, 10, rows(0, 200), head);
        const profile_source s = one_source(dir.path / "gap");
        CHECK(has(s.evidence, "2 slices (slices 1 to 9 missing)"));
        const kernel_table t = read_profile_source(s);
        CHECK(t.rows.size() == 4);
        REQUIRE(t.skipped_count == 1);
        REQUIRE(t.skipped.size() == 1);
        CHECK(t.skipped[0].line == 0);
        CHECK(has(t.skipped[0].source, "op_summary_1_slice_10.csv"));
        CHECK(describe(t.skipped[0]) ==
              t.skipped[0].source +
                  ": slices 1 to 9 missing before this one: their rows are not read");
        // The command warns on stderr, and the report counts it.
        const auto r = run_command(perfcast::cli::report_command,
                                   {(dir.path / "gap").string(), "--chip", "ascend910b2"});
        CHECK(r.status == 0);
        CHECK(has(r.err, "op_summary_1_slice_10.csv: slices 1 to 9 missing before this one"));
        kernel_reader_options strict;
        strict.strict = true;
        CHECK_THROWS_WITH_AS((void)read_profile_source(s, strict),
                             doctest::Contains("slices 1 to 9 missing before this one"),
                             perfcast::parse_error);
        // A first slice above 0: slice 0 is missing before it; two gaps, two reports.
        const fs::path late = dir.path / "late" / "PROF_1" / "mindstudio_profiler_output";
        slice(late, 1, rows(0, 100), head);
        slice(late, 4, rows(0, 200), head);
        const profile_source ls = one_source(dir.path / "late");
        CHECK(has(ls.evidence, "2 slices (slice 0, slices 2 and 3 missing)"));
        const kernel_table l = read_profile_source(ls);
        CHECK(l.rows.size() == 4);
        REQUIRE(l.skipped.size() == 2);
        CHECK(has(l.skipped[0].source, "op_summary_1_slice_1.csv"));
        CHECK(l.skipped[0].reason == "slice 0 missing before this one: its rows are not read");
        CHECK(has(l.skipped[1].source, "op_summary_1_slice_4.csv"));
        CHECK(l.skipped[1].reason ==
              "slices 2 and 3 missing before this one: their rows are not read");
    }
    SUBCASE("an empty or headerless slice is reported and the others read") {
        for (const int bad : {0, 1, 2}) {
            CAPTURE(bad);
            const fs::path top = dir.path / ("damaged_" + std::to_string(bad));
            const fs::path f = top / "PROF_1" / "mindstudio_profiler_output";
            for (int k = 0; k < 3; ++k) {
                if (k == bad) {
                    slice(f, k, "", "");
                } else {
                    slice(f, k, rows(0, 100 * (k + 1)), head);
                }
            }
            const profile_source s = one_source(top);
            CHECK(s.files.size() == 3);
            const kernel_table t = read_profile_source(s);
            CHECK(t.rows.size() == 4);
            REQUIRE(t.skipped_count == 1);
            REQUIRE(t.skipped.size() == 1);
            CHECK(has(t.skipped[0].source, "op_summary_1_slice_" + std::to_string(bad) + ".csv"));
            CHECK(has(t.skipped[0].reason, "slice not read: empty file (expected a header"));
            kernel_reader_options strict;
            strict.strict = true;
            CHECK_THROWS_WITH_AS((void)read_profile_source(s, strict),
                                 doctest::Contains("empty file"), perfcast::parse_error);
        }
        // Rows without the header: not an op table's header, the slice reported.
        const fs::path f = dir.path / "headerless" / "PROF_1" / "mindstudio_profiler_output";
        slice(f, 0, rows(0, 100), head);
        slice(f, 1, rows(0, 200), "");
        const kernel_table t = read_profile_source(one_source(dir.path / "headerless"));
        CHECK(t.rows.size() == 2);
        REQUIRE(t.skipped.size() == 1);
        CHECK(has(t.skipped[0].reason, "slice not read: missing required column"));
        // Every slice damaged: no table, each passed over with its reason.
        const fs::path none = dir.path / "none" / "PROF_1" / "mindstudio_profiler_output";
        slice(none, 0, "", "");
        slice(none, 1, "", "");
        const discovery d = discover_profiles(dir.path / "none");
        CHECK(d.sources.empty());
        CHECK(d.not_taken.size() == 2);
    }
    SUBCASE("every slice has the first one's columns; in another order they read the same") {
        const fs::path f = dir.path / "fewer" / "PROF_1" / "mindstudio_profiler_output";
        slice(f, 0, rows(0, 100), head);
        slice(f, 1, "Add,AI_CORE,200,2\n",
              "OP Type,Task Type,Task Start Time(us),Task Duration(us)\n");
        const profile_source s = one_source(dir.path / "fewer");
        CHECK_THROWS_WITH_AS((void)read_profile_source(s),
                             doctest::Contains("op_summary_1_slice_1.csv:1: a header other than "
                                               "op_summary_1_slice_0.csv's: it lacks 'Device_id'"),
                             perfcast::parse_error);
        const fs::path g = dir.path / "reordered" / "PROF_1" / "mindstudio_profiler_output";
        slice(g, 0, rows(0, 100), head);
        slice(g, 1, "2,200,AI_CORE,Add,0\n",
              "Task Duration(us),Task Start Time(us),Task Type,OP Type,Device_id\n");
        const kernel_table t = read_profile_source(one_source(dir.path / "reordered"));
        REQUIRE(t.rows.size() == 3);
        CHECK(t.rows[2].op_type == "Add");
        CHECK(t.rows[2].device == 0);
        CHECK(t.skipped_count == 0);
    }
}

TEST_CASE("discover: a path that does not exist is an error naming it") {
    CHECK_THROWS_WITH_AS((void)discover_profiles(real / "no_such_run"),
                         doctest::Contains("no_such_run: no such file or folder"),
                         perfcast::parse_error);
}

TEST_CASE("cli: report takes a folder, picks a rank, and refuses several tables") {
    namespace cli = perfcast::cli;
    const scratch_dir dir("discover_cli");
    fs::copy(cann70_rank0, dir.path / "r0", fs::copy_options::recursive);
    fs::copy(cann70_rank1, dir.path / "r1", fs::copy_options::recursive);
    const std::string folder = dir.path.string();

    const auto both = run_command(cli::report_command, {folder, "--chip", "ascend910b2"});
    CHECK(both.status == 1);
    CHECK(has(both.err, "holds 2 op tables; pick one with --rank N"));
    CHECK(has(both.err, "(torch_npu, rank 1)"));

    const auto one =
        run_command(cli::report_command, {folder, "--chip", "ascend910b2", "--rank", "1"});
    CHECK(one.status == 0);
    CHECK(has(one.err, "rank 1 from profiler_info_1.json"));
    // The same report as naming rank 1's file.
    const std::string file =
        (cann70_rank1 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv").string();
    const auto direct = run_command(cli::report_command, {file, "--chip", "ascend910b2"});
    REQUIRE(direct.status == 0);
    const auto body = [](const std::string& s) { return s.substr(s.find('\n')); };
    CHECK(body(one.out) == body(direct.out));

    const auto none =
        run_command(cli::report_command, {folder, "--chip", "ascend910b2", "--rank", "5"});
    CHECK(none.status == 2);
    CHECK(has(none.err, "no op table of rank 5"));
}

TEST_CASE("discover: links to folders are followed, a table reached twice is taken once") {
    const scratch_dir dir("discover_links");
    // A folder of links to each rank's output, as a user makes to gather runs in one place.
    const fs::path ranks = dir.path / "ranks";
    fs::create_directories(ranks);
    fs::create_directory_symlink(cann70_rank0, ranks / "r0");
    fs::create_directory_symlink(cann70_rank1, ranks / "r1");
    const discovery d = discover_profiles(ranks);
    REQUIRE(d.sources.size() == 2);
    CHECK(d.sources[0].rank == 0);
    CHECK(d.sources[1].rank == 1);
    CHECK(d.sources[0].files.front().generic_string().find("/ranks/r0/") != std::string::npos);
    // The same folder reached directly and through a link, and a loop of links back to the
    // root: each table once (its first path in name order), and the walk ends.
    const fs::path both = dir.path / "both";
    fs::create_directories(both);
    fs::create_directory_symlink(cann70_rank0, both / "a_link");
    fs::create_directory_symlink(cann70_rank0, both / "b_link");
    fs::create_directory_symlink(both, both / "loop");
    const discovery once = discover_profiles(both);
    REQUIRE(once.sources.size() == 1);
    CHECK(once.sources[0].files.front().generic_string().find("/both/a_link/") !=
          std::string::npos);
    // A folder reached directly and through a link named before it: the path without the link
    // is kept (the evidence of the folders is read from the path).
    const fs::path mixed = dir.path / "mixed";
    fs::create_directories(mixed / "zz" / "ASCEND_PROFILER_OUTPUT");
    std::ofstream(mixed / "zz" / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv")
        << "OP Type,Task Type,Task Duration(us)\nAdd,AI_CORE,1\n";
    fs::create_directory_symlink(mixed / "zz", mixed / "aa");
    const discovery plain = discover_profiles(mixed);
    REQUIRE(plain.sources.size() == 1);
    CHECK(plain.sources[0].files.front().generic_string().find("/mixed/zz/") != std::string::npos);
    // The same when the folder given is itself a link: the links below it are what counts.
    fs::create_directory_symlink(mixed, dir.path / "mixed_link");
    const discovery given_link = discover_profiles(dir.path / "mixed_link");
    REQUIRE(given_link.sources.size() == 1);
    CHECK(given_link.sources[0].files.front().generic_string().find("/mixed_link/zz/") !=
          std::string::npos);
    for (std::size_t i = 0; i < once.not_taken.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            CHECK(fs::weakly_canonical(once.not_taken[i].path) !=
                  fs::weakly_canonical(once.not_taken[j].path));
}

}  // namespace test_discover
