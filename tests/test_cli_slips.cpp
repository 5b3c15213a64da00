// The command against the slips a new user makes (found by trying it as one): a model file where
// a profile goes, a chip that did not run the profile, one file as both fit and test, a profile
// of two shapes calibrated, a flag's value out of range, a transfer that is all setup.
#include <doctest/doctest.h>

#include <perfcast/io/parse.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_cli_slips {

using namespace perfcast;
using perfcast_test::run_command;

namespace {

using perfcast_test::has;

const std::string data = PERFCAST_SOURCE_DIR "/tests/data/";
// 20 x 1800 MHz rows (the 910B3): 8 AI_VECTOR_CORE Adds of 2 shapes, 21 rows with cube cycles.
const std::string b3 = data + "profiles/kernel_details_910B3_matmul.csv";

}  // namespace

TEST_CASE("cli slips: whatif with a model file where the profile goes names --model") {
    for (const std::string& m : {data + "models/ctr_ranking.model", data + "onnx/dlrm.ONNX"}) {
        const auto r = run_command(cli::whatif_command, {m});
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "'" + m + "' looks like a model, not a profile: give it as --model " + m));
    }
}

TEST_CASE("cli slips: a --chip that the profile's rows contradict is noted, a right one is not") {
    const auto wrong = run_command(cli::report_command, {b3, "--chip", "h100"});
    CHECK(wrong.status == cli::exit_ok);
    CHECK(has(wrong.err, "perfcast: note: " + b3 +
                             ": the profile's cube_utilization(%) column: "
                             "cube cores x clock = 36000 cycles/us"));
    CHECK(has(wrong.err, "but chip h100-sxm has 132 x 1830 MHz = 241560"));
    // 910B1: 24 x 1850 = 44400, 23 % off; validate says it too.
    const auto b1 = run_command(cli::validate_command, {"--test", b3, "--chip", "910B1"});
    CHECK(has(b1.err, "but chip ascend910b1 has 24 x 1850 MHz = 44400"));
    const auto right = run_command(cli::report_command, {b3, "--chip", "910B3"});
    CHECK(right.status == cli::exit_ok);
    CHECK_FALSE(has(right.err, "note:"));
    // whatif from the profile too; without --chip the rows choose it and nothing is noted.
    const auto whatif = run_command(cli::whatif_command, {b3, "--batch", "8", "--chip", "910B1"});
    CHECK(has(whatif.err, "perfcast: note: " + b3 + ":"));
    CHECK(has(whatif.err, "but chip ascend910b1 has 24 x 1850 MHz = 44400"));
    const auto chosen = run_command(cli::whatif_command, {b3, "--batch", "8"});
    CHECK_FALSE(has(chosen.err, "note:"));
}

TEST_CASE("cli slips: validate's positional profile without --holdout, one file fit and test") {
    const auto loose = run_command(cli::validate_command, {b3, "--chip", "910B3"});
    CHECK(loose.status == cli::exit_usage);
    CHECK(has(loose.err, "a PROFILE goes with --holdout SHARE"));
    const auto same =
        run_command(cli::validate_command, {"--fit", b3, "--test", b3, "--chip", "910B3"});
    CHECK(same.status == cli::exit_ok);
    CHECK(has(same.err, "warning: --fit and --test name the same file"));
    const auto zero = run_command(cli::validate_command, {b3, "--holdout", "0", "--chip", "910B3"});
    CHECK(zero.status == cli::exit_usage);
    CHECK(has(zero.err, "--holdout 0: expected the share of rows held out, in (0, 1)"));
}

TEST_CASE("cli slips: validate's PROFILE without --holdout is said before a chip is asked") {
    // b3 names its chip (its cube_utilization(%) column): with no --chip the argument was once
    // judged only after the chip, and a profile that names none said "needs --chip".
    const std::string bare =
        (std::filesystem::temp_directory_path() / "perfcast_cli_slips_nochip.csv").string();
    {
        std::ofstream f(bare);
        f << "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
             "Output Shapes,Output Data Types\n"
             "Add,AI_VECTOR_CORE,3,40,\"4096;4096\",fp16;fp16,4096,fp16\n";
    }
    for (const std::string& f : {b3, bare}) {
        CAPTURE(f);
        const auto loose = run_command(cli::validate_command, {f});
        CHECK(loose.status == cli::exit_usage);
        CHECK(has(loose.err, "unexpected argument '" + f + "': a PROFILE goes with --holdout"));
        CHECK_FALSE(has(loose.err, "needs --chip"));
    }
    const auto none = run_command(cli::validate_command, {});
    CHECK(none.status == cli::exit_usage);
    CHECK(has(none.err, "needs --test FILE (or PROFILE --holdout SHARE)"));
    const auto two = run_command(cli::validate_command, {b3, "--holdout", "0.3", "--test", b3});
    CHECK(two.status == cli::exit_usage);
    CHECK(has(two.err, "--holdout takes one PROFILE and no --fit / --test"));
    // The chip is still taken from the profile where it names one.
    const auto told = run_command(cli::validate_command, {"--test", b3});
    CHECK(told.status == cli::exit_ok);
    CHECK(has(told.err, "ascend910b3"));
    const auto held = run_command(cli::validate_command, {b3, "--holdout", "0.5"});
    CHECK(held.status == cli::exit_ok);
    CHECK(has(held.err, "ascend910b3"));
    std::remove(bare.c_str());
}

TEST_CASE("cli slips: damaged rows skipped are counted by validate and whatif PROFILE") {
    // b3 with one row's duration emptied and two set to text: three damaged rows, each listed on
    // stderr, and now counted on stdout and in JSON too.
    std::ifstream in(b3, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Lines 3, 4 and 5 with their Duration(us) (the 10th field; no quoted field before it holds
    // a comma) replaced: line 3's emptied, the others' set to "abc".
    std::size_t at = text.find('\n') + 1;  // line 2
    const auto replace_duration = [&](std::size_t line_start, std::string_view with) {
        std::size_t p = line_start;
        for (int comma = 0; comma < 9; ++comma) p = text.find(',', p) + 1;
        text.replace(p, text.find(',', p) - p, with);
    };
    for (int line = 2; line < 5; ++line) {
        at = text.find('\n', at) + 1;
        replace_duration(at, line == 2 ? "" : "abc");
    }
    const std::string path =
        (std::filesystem::temp_directory_path() / "perfcast_cli_slips_damaged.csv").string();
    {
        std::ofstream f(path, std::ios::binary);
        f << text;
    }
    auto w = run_command(cli::whatif_command, {path, "--chip", "ascend910b3", "--batch", "2"});
    CHECK(w.status == cli::exit_ok);
    CHECK(has(w.err, "perfcast: warning: skipped row: " + path + ":3:"));
    CHECK(has(w.err, "perfcast: warning: skipped row: " + path + ":5:"));
    CHECK(has(w.out,
              "), 3 rows skipped (communication, DSA, no duration; 3 of them damaged, "
              "listed on stderr)\n"));
    w = run_command(cli::whatif_command,
                    {path, "--chip", "ascend910b3", "--batch", "2", "--format", "json"});
    CHECK(w.status == cli::exit_ok);
    CHECK(perfcast_test::json_number(w.out, "skipped", w.out.find("\"profile\"")) == 3);
    CHECK(perfcast_test::json_number(w.out, "damaged", w.out.find("\"profile\"")) == 3);
    // The undamaged file: none skipped, none damaged.
    w = run_command(cli::whatif_command, {b3, "--chip", "ascend910b3", "--batch", "2"});
    CHECK(has(w.out, "), 0 rows skipped (communication, DSA, no duration)\n"));

    auto v = run_command(cli::validate_command, {"--chip", "ascend910b3", "--test", path});
    CHECK(v.status == cli::exit_ok);
    CHECK(has(v.out,
              "\ndamaged rows skipped: 3 (listed on stderr; not scored nor fitted; "
              "--strict makes the first an error)\n"));
    v = run_command(cli::validate_command,
                    {"--chip", "ascend910b3", "--test", path, "--format", "json"});
    CHECK(v.status == cli::exit_ok);
    CHECK(perfcast_test::json_number(v.out, "damaged_rows_skipped") == 3);
    // A fit file and a scored file: each file's damaged rows, once.
    v = run_command(cli::validate_command,
                    {"--chip", "ascend910b3", "--fit", path, "--test", b3, "--format", "json"});
    CHECK(perfcast_test::json_number(v.out, "damaged_rows_skipped") == 3);
    v = run_command(cli::validate_command,
                    {path, "--chip", "ascend910b3", "--holdout", "0.5", "--seeds", "1-2"});
    CHECK(has(v.out, "\ndamaged rows skipped: 3 "));
    v = run_command(cli::validate_command, {"--chip", "ascend910b3", "--test", b3});
    CHECK(v.status == cli::exit_ok);
    CHECK_FALSE(has(v.out, "damaged rows skipped"));
    v = run_command(cli::validate_command,
                    {"--chip", "ascend910b3", "--test", b3, "--format", "json"});
    CHECK(perfcast_test::json_number(v.out, "damaged_rows_skipped") == 0);
    std::remove(path.c_str());
}

TEST_CASE("cli slips: calibrating on a few distinct ops warns; over its own profile is refused") {
    const std::string out =
        (std::filesystem::temp_directory_path() / "perfcast_slips.params").string();
    const auto few = run_command(cli::calibrate_command,
                                 {b3, "--chip", "910B3", "--tasks", "AI_VECTOR_CORE", "-o", out});
    CHECK(few.status == cli::exit_ok);
    CHECK(has(few.err,
              "warning: the 8 rows fitted hold 2 distinct ops (type, input shapes and dtypes) "
              "for the fit's 14 shared parameters"));
    CHECK(std::filesystem::exists(out));  // written all the same
    std::filesystem::remove(out);
    // validate's fit, too: a hold-out whose fit side is the 8 vector rows' 2 ops.
    const auto thin = run_command(cli::validate_command, {"--fit", b3, "--test", b3, "--chip",
                                                          "910B3", "--tasks", "AI_VECTOR_CORE"});
    CHECK(thin.status == cli::exit_ok);
    CHECK(has(thin.err, "perfcast validate: warning: the "));
    CHECK(has(thin.err, "the score is of a fit that may be far off"));
    const std::string copy =
        (std::filesystem::temp_directory_path() / "perfcast_slips_profile.csv").string();
    std::filesystem::copy_file(b3, copy, std::filesystem::copy_options::overwrite_existing);
    const auto over = run_command(cli::calibrate_command, {copy, "--chip", "910B3", "-o", copy});
    CHECK(over.status == cli::exit_usage);
    CHECK(has(over.err, "is the input file '" + copy + "'"));
    CHECK(std::filesystem::file_size(copy) == std::filesystem::file_size(b3));
    std::filesystem::remove(copy);
}

TEST_CASE("cli slips: a transfer that is all setup is overhead-bound; dtypes in any case") {
    const auto none = run_command(cli::op_command, {"--transfer", "0B", "--format", "json"});
    CHECK(has(none.out, "\"bound\": \"overhead\""));
    const auto big = run_command(cli::op_command, {"--transfer", "64MiB", "--format", "json"});
    CHECK(has(big.out, "\"bound\": \"link\""));
    const auto upper = run_command(
        cli::op_command, {"--elementwise", "1000", "--dtype", "FP16", "--format", "json"});
    CHECK(upper.status == cli::exit_ok);
    CHECK(has(upper.out, "\"dtype\": \"fp16\""));
}

TEST_CASE("cli slips: --svg over the profile or the model is refused; counts in exponent form") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "perfcast_slips";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::string profile = (dir / "p.csv").string();
    const std::string model = (dir / "m.model").string();
    std::filesystem::copy_file(b3, profile);
    std::filesystem::copy_file(data + "models/ctr_ranking.model", model);
    const auto report =
        run_command(cli::report_command, {profile, "--chip", "910B3", "--svg", profile});
    CHECK(report.status == cli::exit_usage);
    CHECK(has(report.err, "--svg " + profile + " is the input file"));
    const auto whatif = run_command(cli::whatif_command, {"--model", model, "--svg", model});
    CHECK(whatif.status == cli::exit_usage);
    CHECK(std::filesystem::file_size(profile) == std::filesystem::file_size(b3));
    CHECK(std::filesystem::file_size(model) ==
          std::filesystem::file_size(data + "models/ctr_ranking.model"));
    std::filesystem::remove_all(dir);
    // --requests 5e3 is 5000 (a whole number in exponent form); 5.5e0 is no count.
    const auto e5 = run_command(cli::whatif_command,
                                {"--streams", "2", "--cube", "12", "--vector", "24", "--max-batch",
                                 "16", "--qps", "1000", "--requests", "5e3", "--format", "json"});
    CHECK(e5.status == cli::exit_ok);
    const auto frac = run_command(cli::whatif_command,
                                  {"--max-batch", "16", "--qps", "1000", "--requests", "5.5e0"});
    CHECK(frac.status == cli::exit_usage);
    CHECK(has(frac.err, "option '--requests': '5.5e0' is not a whole number"));
}

TEST_CASE("cli slips: --trace and --svg into one file are refused before any work") {
    // The SVG, written last, once silently replaced the trace.
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "perfcast_outputs";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "sub");
    const std::string x = (dir / "x").string();
    const auto both = [](const std::string& svg, const std::string& trace) {
        return run_command(cli::whatif_command,
                           {"--streams", "2", "--cube", "12", "--vector", "24", "--max-batch", "16",
                            "--qps", "8000", "--requests", "1000", "--svg", svg, "--trace", trace});
    };
    auto r = both(x, x);
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "--svg " + x + " and --trace " + x +
                         " name one file: the second written would replace the first; choose "
                         "two output files"));
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(x));
    // Another spelling of a file not yet there.
    const std::string other = (dir / "sub" / ".." / "x").string();
    r = both(other, x);
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "--svg " + other + " and --trace " + x + " name one file"));
    // A link to a file that is there: the file is left as it was.
    std::ofstream(x) << "kept";
    const std::string link = (dir / "link").string();
    std::filesystem::create_symlink(x, link);
    r = both(x, link);
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "name one file"));
    CHECK(std::filesystem::file_size(x) == 4);
    // Two files: both written.
    const std::string svg = (dir / "t.svg").string();
    const std::string trace = (dir / "t.json").string();
    r = both(svg, trace);
    CHECK(r.status == cli::exit_ok);
    CHECK(std::filesystem::file_size(svg) > 0);
    CHECK(std::filesystem::file_size(trace) > 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("cli slips: a count past int64 is too large, not a non-number; lists in exponent form") {
    // 1e30 and a 20-digit count are numbers no int64 holds: the error says too large.
    const auto cube =
        run_command(cli::op_command, {"--chip", "910B1", "--cube", "1e30", "--matmul", "16,16,16"});
    CHECK(cube.status == cli::exit_usage);
    CHECK(has(cube.err, "'1e30'"));
    CHECK(has(cube.err, "too large"));
    const auto batch = run_command(cli::whatif_command, {"--batch", "99999999999999999999"});
    CHECK(batch.status == cli::exit_usage);
    CHECK(has(batch.err, "'99999999999999999999' is too large"));
    const auto exp_batch = run_command(cli::whatif_command, {"--batch", "1e30"});
    CHECK(exp_batch.status == cli::exit_usage);
    CHECK(has(exp_batch.err, "'1e30' is too large"));
    // A number that is not whole says so; below 1 or negative is not too large.
    const auto half = run_command(cli::whatif_command, {"--batch", "2.5e0"});
    CHECK(half.status == cli::exit_usage);
    CHECK(has(half.err, "'2.5e0' is not an integer (write 16, or 1.6e1)"));
    CHECK(io::past_int64("1e30"));
    CHECK_FALSE(io::past_int64("-1e30"));
    CHECK_FALSE(io::past_int64("1e-400"));
    CHECK(io::past_int64("9223372036854775808"));
    // Not a number at all stays so.
    const auto word = run_command(cli::whatif_command, {"--batch", "many"});
    CHECK(word.status == cli::exit_usage);
    CHECK(has(word.err, "'many' is not a number or a range"));
    // A list's whole numbers may be written in exponent form, as the single counts may: 1.6e1
    // is 16, the same ranking as 16.
    const auto e1 =
        run_command(cli::whatif_command, {"--batch", "1.6e1", "--streams", "2", "--format", "csv"});
    const auto plain =
        run_command(cli::whatif_command, {"--batch", "16", "--streams", "2", "--format", "csv"});
    CHECK(e1.status == cli::exit_ok);
    CHECK(e1.out == plain.out);
    CHECK(!e1.out.empty());
}

TEST_CASE("cli slips: a GPU --chip as the base of an Ascend --chip-ini is a usage error") {
    const auto r = run_command(cli::whatif_command,
                               {"--chip", "a100", "--chip-ini",
                                data + "platform_config/Ascend910B3.ini", "--batch", "16"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--chip': a100 is no base for --chip-ini"));
    CHECK(has(r.err, "its base is an Ascend preset"));
}

TEST_CASE("cli slips: ranked by throughput, the footer says the leader need not be on the front") {
    const auto by_samples =
        run_command(cli::whatif_command, {"--rank-by", "throughput", "--top", "1"});
    CHECK(by_samples.status == cli::exit_ok);
    CHECK(has(by_samples.out,
              "; ranked by samples/s, a larger batch can lead\nwithout being on "
              "that front."));
    const auto by_qps = run_command(cli::whatif_command, {"--top", "1"});
    CHECK(by_qps.status == cli::exit_ok);
    CHECK_FALSE(has(by_qps.out, "ranked by samples/s"));
}

TEST_CASE("cli slips: a runtime preset of the other vendor's stack is warned, the right one not") {
    const auto acl_gpu =
        run_command(cli::whatif_command, {"--chip", "a100", "--runtime", "acl", "--batch", "16",
                                          "--streams", "1", "--format", "csv"});
    CHECK(acl_gpu.status == cli::exit_ok);
    CHECK(has(acl_gpu.err,
              "perfcast: warning: runtime acl is CANN's (Ascend) host path, and "
              "a100-80gb-sxm is a GPU"));
    const auto cuda_ascend =
        run_command(cli::whatif_command,
                    {"--runtime", "cuda", "--batch", "16", "--streams", "1", "--format", "csv"});
    CHECK(has(cuda_ascend.err, "runtime cuda is CUDA's host path, and ascend910b1 is an Ascend"));
    const auto right =
        run_command(cli::whatif_command, {"--chip", "a100", "--runtime", "cuda", "--batch", "16",
                                          "--streams", "1", "--format", "csv"});
    CHECK_FALSE(has(right.err, "warning"));
    // A deployments row names its chip and runtime: warned by its origin.
    const std::string path =
        (std::filesystem::temp_directory_path() / "perfcast_vendor_rows.csv").string();
    std::ofstream(path) << "chip,model,instances,batch,runtime,samples_per_s\n"
                        << "a100," << data << "models/ctr_ranking.model,1,16,acl,7000\n";
    const auto rows =
        run_command(cli::validate_command, {"--deployments", path, "--knobs", "none"});
    CHECK(rows.status == cli::exit_ok);
    CHECK(has(rows.err, "perfcast: warning: " + path + ":2: runtime acl is CANN's"));
    std::remove(path.c_str());
}

TEST_CASE("cli slips: whatif refuses a profile reader's flags when it reads no profile") {
    const std::string hist = data + "bs_hist_seed.csv";
    const std::vector<std::vector<std::string_view>> cases{
        {"--strict"},
        {"--device", "3"},
        {"--step", "2"},
        {"--rank", "5"},
        {"--strict", "--bs-hist", hist, "--p99-ms", "1"}};
    for (const std::vector<std::string_view>& args : cases) {
        const auto r = run_command(cli::whatif_command, args);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, "option '" + std::string(args[0]) +
                             "' applies to a PROFILE.csv it reads (whatif PROFILE.csv --batch B)"));
    }
    // --rank with a sort key keeps its own advice.
    const auto rank = run_command(cli::whatif_command, {"--rank", "qps"});
    CHECK(rank.status == cli::exit_usage);
    CHECK(has(rank.err, "the sort key is --rank-by qps"));
}

TEST_CASE("cli slips: a profile given as a FIFO is read once, from its start") {
    // A process substitution, report <(zcat p.csv.gz): the file was once opened to look for an
    // SQLite header, which took the pipe's first 8 KiB, then opened again (a named FIFO hung).
    namespace fs = std::filesystem;
    const fs::path fifo = fs::temp_directory_path() / "perfcast_slips_fifo.csv";
    fs::remove(fifo);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string text;
    {
        std::ifstream f(b3, std::ios::binary);
        text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    REQUIRE(text.size() < 65536);  // fits the pipe's buffer: the writer never waits on a read
    std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << text; });
    const auto r = run_command(cli::report_command, {fifo.string(), "--chip", "910B3"});
    // Had the command not opened it, the writer would wait in open() for a reader: be one.
    const int unblock = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    writer.join();
    if (unblock >= 0) ::close(unblock);
    fs::remove(fifo);
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "torch_npu kernel_details, 29 rows"));
    // A device is refused by name, not read until a record passes 1 MiB.
    const auto zero = run_command(cli::report_command, {"/dev/zero", "--chip", "910B3"});
    CHECK(zero.status == 1);
    CHECK(has(zero.err, "/dev/zero: is a device or socket, expected a regular file"));
}

TEST_CASE("cli slips: report's csv and json list each skipped row with its file") {
    // The CANN 7.0-era file's line 17 has 31 fields under a 32-field header.
    const std::string f = data +
                          "profiles/real/torchnpu_2023_cann70_rank0/ASCEND_PROFILER_OUTPUT/"
                          "kernel_details.csv";
    const auto csv = run_command(cli::report_command, {f, "--chip", "910B2", "--format", "csv"});
    CHECK(csv.status == cli::exit_ok);
    CHECK(has(csv.out, "skipped_row," + f + ":17,column,0,,31 fields where the header has 32\n"));
    const auto json = run_command(cli::report_command, {f, "--chip", "910B2", "--format", "json"});
    CHECK(json.status == cli::exit_ok);
    CHECK(has(json.out, "\"source\": \"" + f + "\",\n      \"line\": 17"));
}

TEST_CASE("cli slips: a hold-out with an empty side is refused, not scored as calibrated") {
    // The 910B3 profile holds few groups: a tiny share holds none out, a large one all.
    const auto none =
        run_command(cli::validate_command, {b3, "--holdout", "0.001", "--chip", "910B3"});
    CHECK(none.status == 1);
    CHECK(has(none.err, "puts no row on the held-out side, none to score"));
    CHECK(has(none.err, "give a larger share"));
    const auto all =
        run_command(cli::validate_command, {b3, "--holdout", "0.999", "--chip", "910B3"});
    CHECK(all.status == 1);
    CHECK(has(all.err, "puts every row on the held-out side, none to fit on"));
    const auto all_seeds = run_command(
        cli::validate_command, {b3, "--holdout", "0.999", "--seeds", "1-2", "--chip", "910B3"});
    CHECK(all_seeds.status == 1);
    CHECK(has(all_seeds.err,
              "fit rows (hold-out seed) = 1, expected a seed that leaves rows to "
              "fit on (this one holds out every group of 29 rows)"));
    const auto stdin_twice =
        run_command(cli::validate_command, {"--fit", "-", "--test", "-", "--chip", "910B3"});
    CHECK(stdin_twice.status == cli::exit_usage);
    CHECK(has(stdin_twice.err, "standard input is read once"));
    // Flags of a fit or a draw where there is none: refused, not ignored.
    const auto seed =
        run_command(cli::validate_command, {"--test", b3, "--chip", "910B3", "--seed", "3"});
    CHECK(seed.status == cli::exit_usage);
    CHECK(has(seed.err, "--seed draws a hold-out: it needs PROFILE --holdout SHARE"));
    const auto eff = run_command(cli::validate_command,
                                 {"--test", b3, "--chip", "910B3", "--vector-efficiency", "fit"});
    CHECK(eff.status == cli::exit_usage);
    CHECK(has(eff.err, "--vector-efficiency sets how a fit runs"));
    // Nothing to fit names the file and the filter, as validate's nothing scored does.
    const std::string out =
        (std::filesystem::temp_directory_path() / "perfcast_slips_none.params").string();
    const auto cal = run_command(cli::calibrate_command,
                                 {b3, "--chip", "910B3", "--tasks", "AI_COR", "-o", out});
    CHECK(cal.status == 1);
    CHECK(has(cal.err, "nothing to fit (a calibration needs rows the model maps to ops): " + b3 +
                           " holds 29 rows, none of them kept by --tasks AI_COR"));
    CHECK(!std::filesystem::exists(out));
    // '-' as an output is no file named '-'.
    const auto dash = run_command(cli::calibrate_command, {b3, "--chip", "910B3", "-o", "-"});
    CHECK(dash.status == cli::exit_usage);
    CHECK(
        has(dash.err, "option '-o': '-' is not a file to write (standard output is /dev/stdout)"));
    CHECK(!std::filesystem::exists("-"));
}

TEST_CASE("cli slips: a seed that scores no row shows no error, not 0 %") {
    // --types Add keeps the held-out Add rows only; seeds 1, 5 and 6 hold out none.
    const auto r =
        run_command(cli::validate_command, {b3, "--holdout", "0.3", "--seeds", "1-6", "--chip",
                                            "910B3", "--types", "Add", "--format", "json"});
    REQUIRE(r.status == cli::exit_ok);
    CHECK(has(r.out, "\"rows\": 0,\n      \"mape\": null,\n      \"median_ape\": null"));
    CHECK(!has(r.out, "\"rows\": 0,\n      \"mape\": 0"));
}

TEST_CASE("cli slips: a calibration's per-type terms price op --type, and are noted elsewhere") {
    const std::string params =
        (std::filesystem::temp_directory_path() / "perfcast_slips_types.params").string();
    std::ofstream(params) << "fixed_us.Mul = 100\n";
    const std::vector<std::string_view> add = {"--chip",        "910B1", "--params", params,
                                               "--elementwise", "4000",  "--format", "json"};
    const auto plain = run_command(cli::op_command, add);
    REQUIRE(plain.status == cli::exit_ok);
    CHECK(has(plain.err,
              "per-type terms (1 key) are not applied: the op prices by op kind: "
              "--type T applies those of profiler op type T"));
    auto typed_args = add;
    typed_args.insert(typed_args.end(), {"--type", "Mul"});
    const auto typed = run_command(cli::op_command, typed_args);
    REQUIRE(typed.status == cli::exit_ok);
    CHECK(typed.err.empty());
    const auto latency = [](const std::string& json) {
        const auto at = json.find("\"latency_us\": ");
        REQUIRE(at != std::string::npos);
        return std::stod(json.substr(at + 14));
    };
    // Tolerance: the fixed time adds exactly 100 us to a head-priced op; 1e-6 us of printing.
    CHECK(latency(typed.out) - latency(plain.out) == doctest::Approx(100).epsilon(1e-6));
    auto other = add;
    other.insert(other.end(), {"--type", "Add"});
    CHECK(has(run_command(cli::op_command, other).err, "holds no terms for op type Add"));
    const auto no_params = run_command(cli::op_command, {"--elementwise", "4000", "--type", "Mul"});
    CHECK(no_params.status == cli::exit_usage);
    const auto whatif = run_command(cli::whatif_command, {"--batch", "16", "--params", params});
    CHECK(whatif.status == cli::exit_ok);
    CHECK(has(whatif.err, "are not applied: the model prices its nodes by op kind"));
    std::filesystem::remove(params);
}

}  // namespace test_cli_slips
