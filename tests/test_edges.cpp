// Right answers at the edges (issue 16): checked, atomic outputs; no undefined behaviour on huge
// shapes; bounded readers (line and file limits, directories and devices refused, BOM and CR
// line ends, escaped excerpts); plausibility bounds on physical inputs. Hostile input files are
// in tests/adversarial/ (its README lists them); large ones are generated here.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/io/line_source.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/output_file.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/op.hpp>
#include <perfcast/shape.hpp>
#include <perfcast/whatif.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/cmd_op.hpp"
#include "../examples/perfcast/cmd_report.hpp"
#include "../examples/perfcast/cmd_validate.hpp"
#include "../examples/perfcast/cmd_whatif.hpp"
#include "cli_support.hpp"
#include "support.hpp"

using namespace perfcast;
using perfcast_test::message_of;
using perfcast_test::run_command;
using perfcast_test::scratch_dir;

namespace {

namespace fs = std::filesystem;

bool has(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

std::string adversarial(std::string_view name) {
    return std::string(PERFCAST_SOURCE_DIR "/tests/adversarial/") + std::string(name);
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void spit(const fs::path& p, std::string_view text) {
    std::ofstream f(p, std::ios::binary);
    f << text;
}

const std::string profile_910b3 =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B3_matmul.csv";

bool printable_ascii(std::string_view s) {
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\n') || u >= 0x7F) return false;
    }
    return true;
}

}  // namespace

// ---- item 2: checked, atomic outputs ---------------------------------------------------------

TEST_CASE("write_output replaces a file whole and leaves no temporary file") {
    const scratch_dir d("atomic");
    const io::output_file f{(d.path / "out.txt").string(), "-o"};
    spit(f.path, "old contents\n");
    io::write_output(f, "new\n");
    CHECK(slurp(f.path) == "new\n");
    CHECK(d.entries() == 1);
}

TEST_CASE("write_output: a failed writer keeps the old file and removes its temporary file") {
    const scratch_dir d("keep_old");
    const io::output_file f{(d.path / "trace.json").string(), "--trace"};
    spit(f.path, "{\"old\": true}\n");
    const std::string what = message_of([&] {
        io::write_output(f, [](std::ostream& os) {
            os << "{\"half";
            os.setstate(std::ios::badbit);  // as a failed formatter leaves the stream
        });
    });
    CHECK(has(what, "cannot write '" + f.path + "' (--trace)"));
    CHECK(slurp(f.path) == "{\"old\": true}\n");
    CHECK(d.entries() == 1);
}

TEST_CASE("write_output to a full device fails with the OS reason") {
    if (!fs::exists("/dev/full")) return;
    const std::string what = message_of([] { io::write_output({"/dev/full", "--svg"}, "x\n"); });
    CHECK(what == "cannot write '/dev/full' (--svg): No space left on device");
}

TEST_CASE("check_output refuses directories, missing directories and links where asked") {
    const scratch_dir d("check");
    CHECK(has(message_of([&] { io::check_output({d.path.string(), "-o"}); }), "is a directory"));
    const std::string missing = (d.path / "no" / "such" / "x.params").string();
    CHECK(has(message_of([&] { io::check_output({missing, "-o"}); }), "does not exist"));
    CHECK(message_of([&] { io::check_output({"", "-o"}); }) == "cannot write '' (-o): empty path");

    const fs::path target = d.path / "real.params";
    spit(target, "keep me\n");
    const fs::path link = d.path / "link.params";
    fs::create_symlink(target, link);
    const io::output_file refused{link.string(), "-o", io::symlinks::refuse};
    CHECK(has(message_of([&] { io::check_output(refused); }), "is a symbolic link"));
    CHECK(has(message_of([&] { io::write_output(refused, "x"); }), "is a symbolic link"));
    CHECK(slurp(target) == "keep me\n");
    // Followed where links are allowed: the target is replaced, the link stays a link.
    io::write_output({link.string(), "--svg"}, "svg\n");
    CHECK(fs::is_symlink(link));
    CHECK(slurp(target) == "svg\n");
    CHECK(d.entries() == 2);  // no probe or temporary file left behind
}

TEST_CASE("calibrate -o: checked before the fit, one prefix, the OS reason, no links") {
    const scratch_dir d("calibrate");
    const std::string missing = (d.path / "none" / "fit.params").string();
    const auto r =
        run_command(cli::calibrate_command, {profile_910b3, "--chip", "910B3", "-o", missing});
    CHECK(r.status == cli::exit_failure);
    CHECK(r.err == "perfcast calibrate: cannot write '" + missing + "' (-o): directory '" +
                       (d.path / "none").string() + "' does not exist\n");

    const fs::path target = d.path / "old.params";
    spit(target, "cube_efficiency = 0.5\n");
    const fs::path link = d.path / "planted.params";
    fs::create_symlink(target, link);
    const auto l = run_command(cli::calibrate_command,
                               {profile_910b3, "--chip", "910B3", "-o", link.string()});
    CHECK(l.status == cli::exit_failure);
    CHECK(has(l.err, "is a symbolic link"));
    CHECK(slurp(target) == "cube_efficiency = 0.5\n");

    if (fs::exists("/dev/full")) {
        const auto full = run_command(cli::calibrate_command,
                                      {profile_910b3, "--chip", "910B3", "-o", "/dev/full"});
        CHECK(full.status == cli::exit_failure);
        CHECK(has(full.err, "perfcast calibrate: cannot write '/dev/full' (-o): No space left"));
        CHECK_FALSE(has(full.err, "calibrate: perfcast calibrate"));
    }
    // The good path still writes a params file that reads back.
    const fs::path good = d.path / "fit.params";
    const auto ok = run_command(cli::calibrate_command,
                                {profile_910b3, "--chip", "910B3", "-o", good.string()});
    CHECK(ok.status == cli::exit_ok);
    CHECK_NOTHROW((void)io::read_params_file(good.string()));
}

TEST_CASE("whatif and report: --svg and --trace fail on a bad path or a full device") {
    const scratch_dir d("svg");
    const std::string missing = (d.path / "none" / "x.svg").string();
    const auto w = run_command(cli::whatif_command, {"--svg", missing});
    CHECK(w.status == cli::exit_failure);
    CHECK(has(w.err, "(--svg): directory"));
    CHECK(w.out.empty());  // failed before the search printed anything
    const auto t = run_command(cli::whatif_command, {"--qps", "1000", "--trace", d.path.string()});
    CHECK(t.status == cli::exit_failure);
    CHECK(has(t.err, "(--trace): is a directory"));
    if (fs::exists("/dev/full")) {
        const auto full = run_command(cli::whatif_command, {"--svg", "/dev/full"});
        CHECK(full.status == cli::exit_failure);
        CHECK(has(full.err, "cannot write '/dev/full' (--svg): No space left on device"));
        const auto rep = run_command(cli::report_command,
                                     {profile_910b3, "--chip", "910B3", "--svg", "/dev/full"});
        CHECK(rep.status == cli::exit_failure);
        CHECK(has(rep.err, "(--svg): No space left on device"));
    }
}

TEST_CASE("standard output: a failed write is remembered with its reason") {
    if (!fs::exists("/dev/full")) return;
    std::FILE* full = std::fopen("/dev/full", "w");
    REQUIRE(full != nullptr);
    {
        cli::checked_file_buf buf(full);
        std::ostream os(&buf);
        for (int i = 0; i < 2000; ++i) os << "ascend910b1  24 cores ...\n";  // past stdio's buffer
        os.flush();
        CHECK_FALSE(buf.finish());
        CHECK(buf.reason() == "No space left on device");
    }
    std::fclose(full);
    std::FILE* null = std::fopen("/dev/null", "w");
    REQUIRE(null != nullptr);
    cli::checked_file_buf ok(null);
    std::ostream os(&ok);
    os << "fine\n";
    CHECK(ok.finish());
    CHECK(ok.reason().empty());
    std::fclose(null);
}

// ---- item 3: no undefined behaviour on huge shapes -------------------------------------------

static_assert(ceil_div(std::numeric_limits<std::int64_t>::max(), 2) == (std::int64_t{1} << 62));
static_assert(ceil_div(7, 2) == 4 && ceil_div(8, 2) == 4 && ceil_div(0, 5) == 0);

TEST_CASE("a matmul dimension near 2^63 is too large, not an overflow") {
    const auto r = run_command(cli::op_command, {"--matmul", "9223372036854775807,2,2"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "perfcast::batch_matmul: m (padded to the fractal)"));
    CHECK(has(r.err, "too large"));
    CHECK(has(message_of([] { (void)matmul(2, 2, std::int64_t{1} << 62, dtype::fp32); }),
              "too large"));
}

TEST_CASE("an elementwise op whose bytes overflow 63 bits names the op") {
    CHECK(has(message_of([] { (void)elementwise(std::int64_t{1} << 61, dtype::fp64); }),
              "perfcast::elementwise: bytes (elements x dtype size)"));
    CHECK(has(message_of([] {
                  (void)concat({shape{std::int64_t{1} << 62}, shape{std::int64_t{1} << 62}}, 1,
                               dtype::int8);
              }),
              "perfcast::concat: concat elements"));
    const auto r =
        run_command(cli::whatif_command,
                    {"--model", adversarial("overflow_elementwise.model"), "--batch", "8"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "perfcast::elementwise: bytes (elements x dtype size)"));
    CHECK(has(r.err, "too large"));
}

TEST_CASE("a profile row of 1e22-element shapes is too large, naming its line") {
    const scratch_dir d("rows");
    std::ifstream in(profile_910b3, std::ios::binary);
    std::string header;
    std::string row;
    std::getline(in, header);
    std::getline(in, row);
    const auto swap = [&row](std::string_view from, std::string_view to) {
        const std::size_t at = row.find(from);
        REQUIRE(at != std::string::npos);
        row.replace(at, from.size(), to);
    };
    swap("\"\"\"81920,4096;8192,512\"\"\"",
         "\"\"\"100000000000,100000000000;100000000000,512\"\"\"");
    swap("\"\"\"4096,512\"\"\"", "\"\"\"100000000000,512\"\"\"");
    const std::string csv = (d.path / "big.csv").string();
    spit(csv, header + "\n" + row + "\n");
    const auto r = run_command(cli::validate_command, {"--chip", "910B3", "--test", csv});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err,
              "row at line 2 (aclnnMatmul_MatMulCommon_MatMulV2, MatMulV2): "
              "perfcast::batch_matmul: m*k = 1e+22"));
    CHECK(has(r.err, "too large"));
}

TEST_CASE("a chip of 1e9 cores is refused before any table is allocated") {
    chip c = chips::ascend910b1;
    c.vector.cores = 1000000000;
    CHECK(has(message_of([&] { (void)validate(c); }),
              "vector.cores = 1e+09, expected at most 65536"));
    std::string ini = slurp(PERFCAST_SOURCE_DIR "/tests/data/platform_config/Ascend910B1.ini");
    const std::size_t at = ini.find("vector_core_cnt=");
    REQUIRE(at != std::string::npos);
    ini.replace(at, ini.find('\n', at) - at, "vector_core_cnt=1000000000");
    CHECK(has(message_of([&] { (void)io::chip_from_ini(io::parse_ini_string(ini, "big.ini")); }),
              "vector.cores = 1e+09, expected at most 65536 cores (chip read from big.ini)"));
}

TEST_CASE("an evaluation table past 16 GiB is refused before it is allocated") {
    chip c = chips::ascend910b1;
    c.vector.cores = 65536;
    const std::vector<node> ops(
        200, nodes::elementwise({batch_dim{1, 0}, batch_dim{0, 64}}, dtype::fp16));
    std::vector<std::int64_t> batches;
    for (std::int64_t b = 1; b <= 64; ++b) batches.push_back(b);
    const std::vector<int> cube{24};
    const std::vector<int> vec{65536};
    // 64 x 200 x 65537 entries: far past 16 GiB, so it must fail before allocating anything.
    const std::string m = message_of([&] { (void)node_eval_table(c, ops, batches, cube, vec); });
    CHECK(has(m, "perfcast::node_eval_table: batches x nodes x (cores + 1) = 64 x 200 x 65537"));
    CHECK(has(m, "a table of at most 16 GiB"));
}

// ---- item 4: bounded readers ----------------------------------------------------------------

TEST_CASE("model files: a byte-order mark, CRLF and lone-CR line ends read as written") {
    const model bom = io::read_model_file(adversarial("bom_crlf.model"));
    CHECK(bom.name == "bom_crlf");
    CHECK(bom.nodes.size() == 2);
    const model cr = io::read_model_file(adversarial("cr_only.model"));
    CHECK(cr.name == "cr_only");
    CHECK(cr.nodes.size() == 2);
}

TEST_CASE("params and ini files: BOM and lone-CR line ends read as written") {
    const auto cal = io::read_params_file(adversarial("bom_cr.params"));
    CHECK(cal.params.cube_efficiency == 0.5);
    CHECK(cal.params.vector_efficiency == 0.6);
    std::string ini = slurp(PERFCAST_SOURCE_DIR "/tests/data/platform_config/Ascend910B1.ini");
    for (std::size_t i = ini.find('\n'); i != std::string::npos; i = ini.find('\n', i)) {
        ini[i] = '\r';
    }
    const chip from_cr = io::chip_from_ini(io::parse_ini_string("\xEF\xBB\xBF" + ini));
    CHECK(from_cr.cube.cores == chips::ascend910b1.cube.cores);
}

TEST_CASE("readers refuse directories and devices by name") {
    const scratch_dir d("readers");
    const auto p = run_command(cli::whatif_command, {"--params", d.path.string()});
    CHECK(p.status == cli::exit_failure);
    CHECK(has(p.err, "read_params: " + d.path.string() + ": is a directory"));
    CHECK(has(message_of([&] { (void)io::read_model_file(d.path.string()); }), "is a directory"));
    CHECK(has(message_of([&] { (void)io::read_ini_file(d.path.string()); }), "is a directory"));
    if (fs::exists("/dev/zero")) {
        CHECK(has(message_of([] { (void)io::read_model_file("/dev/zero"); }),
                  "/dev/zero: is a device or socket"));
        CHECK(has(message_of([] { (void)io::read_params_file("/dev/zero"); }),
                  "/dev/zero: is a device or socket"));
    }
}

TEST_CASE("a line past 1 MiB is refused with a short excerpt") {
    const std::string long_line = "matmul " + std::string(std::size_t{2} << 20, '1') + " fp16\n";
    const std::string m = message_of([&] { (void)io::parse_model(long_line, "long.model"); });
    CHECK(has(m, "long.model:1: line longer than 1048576 bytes"));
    CHECK(m.size() < 300);
    std::istringstream params("cube_efficiency = " + std::string(std::size_t{2} << 20, '5'));
    const std::string pm = message_of([&] { (void)io::read_params(params, "long.params"); });
    CHECK(has(pm, "line longer than 1048576 bytes"));
    CHECK(pm.size() < 300);
}

TEST_CASE("an input past its kind's byte limit stops the reader") {
    std::istringstream in(std::string(std::size_t{1} << 17, '\n'));  // two 64 KiB reads
    io::detail::line_source src(in, "big.params", "read_params", io::max_line_bytes, 70000);
    std::string_view line;
    CHECK(has(message_of([&] {
                  while (src.next(line)) {
                  }
              }),
              "input longer than 70000 bytes"));
}

TEST_CASE("echoed bytes are escaped and cut") {
    const std::string bin =
        message_of([] { (void)io::read_model_file(adversarial("binary_op.model")); });
    CHECK(has(bin, "binary_op.model:2:1"));
    CHECK(has(bin, "bad\\x00op\\x01\\xFF"));
    CHECK(printable_ascii(bin));
    const std::string name(1000000, 'n');
    const std::string big = message_of([&] { (void)io::parse_model("name " + name + " extra\n"); });
    CHECK(big.size() < 400);
    CHECK(has(big, "..."));
    const std::string one = message_of([&] { (void)io::parse_model("name " + name + "\n"); });
    CHECK(has(one, "expected a model name of at most 100 bytes"));
    CHECK(one.size() < 400);
    std::istringstream params(std::string("cube_\x01\xFE") + "efficiency = 1\n");
    const std::string pm = message_of([&] { (void)io::read_params(params, "bin.params"); });
    CHECK(has(pm, "cube_\\x01\\xFEefficiency"));
    CHECK(printable_ascii(pm));
}

TEST_CASE("validate --worst -1 is refused, not wrapped to every row") {
    const auto r = run_command(cli::validate_command,
                               {"--chip", "910B3", "--test", profile_910b3, "--worst", "-1"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--worst': '-1' is not a row count >= 0"));
}

// ---- item 6: plausibility bounds -------------------------------------------------------------

TEST_CASE("physical inputs outside their documented ranges name the bound") {
    chip c = chips::ascend910b1;
    c.cube.clock = frequency{1e-300, units::Hz};
    CHECK(has(message_of([&] { (void)validate(c); }), "a clock between 1 MHz and 10 GHz"));
    c.cube.clock = frequency{1800, units::GHz};
    CHECK(has(message_of([&] { (void)validate(c); }), "a clock between 1 MHz and 10 GHz"));

    CHECK(has(message_of([] { (void)io::read_params_file(adversarial("huge_launch.params")); }),
              "expected a time in [0, 1e9) us, got 1e300"));
    CHECK(has(message_of([] { (void)io::read_model_file(adversarial("huge_host_us.model")); }),
              "host_us = \"1e308\", expected a host time in [0, 1e9) us"));
    const auto t = run_command(cli::op_command, {"--transfer", "1e30MiB"});
    CHECK(t.status == cli::exit_failure);
    CHECK(has(t.err, "a size between 0 B and 1 PiB"));
    CHECK(has(message_of([] { (void)io::parse_duration("2e9s", "--window"); }),
              "a time between 0 s and 1 day"));
    CHECK(has(message_of([] { (void)io::parse_duration("-5ms", "--window"); }),
              "a time between 0 s and 1 day"));
}

TEST_CASE("a 20-digit integer is too large, not 'not a number'; echoed text is escaped") {
    const std::string big =
        message_of([] { (void)io::parse_int("12345678901234567890", "--top"); });
    CHECK(has(big, "--top = '12345678901234567890', expected an integer of at most"));
    CHECK(has(big, "too large"));
    CHECK(has(message_of([] { (void)io::parse_int("12x", "--top"); }), "expected an integer"));
    CHECK(has(message_of([] { (void)io::parse_double(std::string("1\0", 2), "--qps"); }),
              "'1\\x00', expected a finite number"));
}

TEST_CASE("huge numbers print in exponent form, not as hundreds of digits") {
    CHECK(io::format_fixed(1e300, 1) == "1e+300");
    CHECK(io::format_fixed(-2.5e20, 0) == "-2.5e+20");
    CHECK(io::format_fixed(123456.789, 1) == "123456.8");
    CHECK(io::format_fixed(999999999999999.0, 0) == "999999999999999");
}
