// Right answers at the edges (issue 16): checked, atomic outputs; no undefined behaviour on huge
// shapes; bounded readers (line and file limits, directories and devices refused, BOM and CR
// line ends, escaped excerpts); plausibility bounds on physical inputs. Hostile input files are
// in tests/adversarial/ (its README lists them); large ones are generated here.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/io/histogram.hpp>
#include <perfcast/io/ini.hpp>
#include <perfcast/io/line_source.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/output_file.hpp>
#include <perfcast/io/params_file.hpp>
#include <perfcast/io/parse.hpp>
#include <perfcast/io/table.hpp>
#include <perfcast/op.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving.hpp>
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

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_edges {

using namespace perfcast;
using perfcast_test::message_of;
using perfcast_test::run_command;
using perfcast_test::scratch_dir;

namespace {

namespace fs = std::filesystem;

using perfcast_test::has;

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
    CHECK(r.status == cli::exit_usage);  // the op is the flags' description
    CHECK(has(r.err, "perfcast::matmul: m (padded to the fractal)"));
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

TEST_CASE("a profile row of 1e22-element shapes is too large: not mappable, saying why") {
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
    // Its only row not mappable: nothing scored, the error naming the file, the line and the
    // size that is too large.
    const auto r = run_command(cli::validate_command, {"--chip", "910B3", "--test", csv});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, csv + " holds 1 rows, and the model maps none of them to an op (1 shapes; "
                           "line 2, aclnnMatmul_MatMulCommon_MatMulV2: "));
    CHECK(has(r.err, "perfcast::matmul: m*k = 1e+22"));
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
    CHECK(has(message_of([&] { (void)io::chip_from_ini(io::parse_ini(ini, "big.ini")); }),
              "vector.cores = 1e+09, expected at most 65536 cores (chip read from big.ini)"));
}

TEST_CASE("an evaluation table past 16 GiB is refused before it is allocated") {
    const std::vector<node> ops(
        2000, nodes::elementwise({batch_dim{1, 0}, batch_dim{0, 64}}, dtype::fp16));
    std::vector<batch_size> batches;
    for (std::int64_t b = 1; b <= 4000; ++b) batches.push_back(batch_size{b});
    const std::vector<core_count> cube{core_count{24}};
    std::vector<core_count> vec;
    for (int k = 1; k <= 48; ++k) vec.push_back(core_count{k});
    // 4000 batches x 2000 vector nodes x 48 limits = 3.84e8 entries: past 16 GiB at any entry
    // size over 45 bytes, so it must fail before allocating anything.
    static_assert(sizeof(node_eval) > 45);
    const std::string m =
        message_of([&] { (void)node_eval_table(chips::ascend910b1, ops, batches, cube, vec); });
    CHECK(has(m, "perfcast::node_eval_table: batches x (node, core limit) pairs = 4000 x 96000"));
    CHECK(has(m, "a table of at most 16 GiB"));
}

// ---- item 5: memory that follows the question ------------------------------------------------

TEST_CASE("node_eval_table: sized by the grid's core limits, not by the chip's cores") {
    chip big = chips::ascend910b1;
    big.vector.cores = 65536;  // the most validate(chip) allows
    const whatif_grid g{.streams = counts<stream_count>({1, 2}),
                        .cube = counts<core_count>({24}),
                        .vector = counts<core_count>({48, 65536}),
                        .batches = counts<batch_size>({16, 32})};
    std::size_t cube_nodes = 0, vector_nodes = 0, other_nodes = 0;
    for (const node& n : scenario::ctr_ranking) {
        const engine e = engine_of(n);
        if (n.is_transfer() || e == engine::aicpu) {
            ++other_nodes;
        } else if (e == engine::cube) {
            ++cube_nodes;
        } else {
            ++vector_nodes;
        }
    }
    REQUIRE(vector_nodes > 0);
    const node_eval_table t(big, scenario::ctr_ranking, g.batches, g.cube, g.vector);
    // One entry per batch and (node, limit) pair the grid asks for: 2 x (cube + 2 x vector +
    // others). One entry per core, as before, would be 2 x 34 x 65537 = 4.5 million.
    const std::size_t expected = 2 * (cube_nodes + 2 * vector_nodes + other_nodes);
    CHECK(t.entries() == expected);
    CHECK(t.bytes() == expected * sizeof(node_eval));
    CHECK(t.entries() < 4 * scenario::ctr_ranking.size());
    // The sweep over it gives what evaluate_card gives, at the huge limit too.
    const whatif_result r = sweep(big, scenario::ctr_ranking, g);
    REQUIRE(r.ranked.size() == g.size());
    for (const candidate& x : r.ranked) {
        const card_result direct = evaluate_card(big, scenario::ctr_ranking, batch_size{x.batch},
                                                 stream_count{x.streams}, x.split);
        candidate y = make_candidate(direct);
        // What the card holds is the sweep's (device_memory.hpp), not the card's timing.
        const memory_need need = memory_of(big, scenario::ctr_ranking, batch_size{x.batch});
        CHECK(x.memory == need.on_card(stream_count{x.streams}, {}));
        CHECK(x.fits == fits(big, need, stream_count{x.streams}, {}));
        y.memory = x.memory;
        y.fits = x.fits;
        CHECK(x == y);
    }
    // A limit the table was not built for is an error naming it, not a read past its end.
    CHECK(has(message_of([&] {
                  (void)t.at(0, 0, core_split{core_count{24}, core_count{12}});
              }),
              "vector limit = 12, expected a core limit the table was built for"));
}

TEST_CASE("a whatif grid past 1e7 deployments or 64 streams is refused before it is evaluated") {
    whatif_grid g{.streams = counts<stream_count>({1}),
                  .cube = counts<core_count>({24}),
                  .vector = counts<core_count>({48}),
                  .batches = {}};
    for (std::int64_t b = 1; b <= 110000; ++b) g.batches.push_back(batch_size{b});
    for (int s = 1; s <= 100; ++s) g.streams.push_back(stream_count{s});
    g.streams.erase(g.streams.begin());
    const std::string m = message_of([&] { (void)validate(g, chips::ascend910b1); });
    CHECK(has(m, "streams = 65, expected at most 64 streams per card"));
    g.streams = counts<stream_count>({1, 2, 3, 4, 5, 6});
    g.cube = counts<core_count>({6, 8, 12, 24});
    g.vector = counts<core_count>({10, 12, 24, 48});
    CHECK(has(message_of([&] { (void)validate(g, chips::ascend910b1); }),
              "deployments (streams x cube x vector x batches) = 10560000, expected at most 1e7"));
    const auto r = run_command(cli::whatif_command, {"--batch", "1-100000", "--streams", "1-7"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "deployments (streams x cube x vector x batches) = 11200000"));
    CHECK(r.out.empty());
}

TEST_CASE("serving: huge split requests keep the saturation probe small; past 1e8 chunks refused") {
    const gear_set g32 = gear_set::every(32);
    const auto huge = batch_distribution::fixed(max_batch_size);  // 32768 chunks each at 32
    CHECK(mean_chunks(g32, huge) == 32768);
    CHECK(saturation_probe_size(g32, huge) == saturation_probe_min_requests);
    const auto seed =
        io::read_bs_histogram_file(PERFCAST_SOURCE_DIR "/tests/data/bs_hist_seed.csv");
    CHECK(saturation_probe_size(gear_set::every(8), seed) == saturation_probe_requests);
    CHECK(saturation_probe_size(g32, batch_distribution::fixed(32 * 1000)) == 1000);

    const server_config srv =
        make_card_server(scenario::default_chip, scenario::ctr_ranking, stream_count{1},
                         core_split{core_count{24}, core_count{48}}, g32);
    CHECK(has(message_of([&] {
                  (void)simulate(srv, huge, request_rate{1, units::qps}, 20000);
              }),
              "chunks (requests x chunks per request) = 655360000, expected at most 1e8"));
    const auto r = run_command(cli::whatif_command,
                               {"--qps", "1", "--batch", "1048576", "--max-batch", "32,64"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err,
              "option '--requests': 20000 requests x 32768 chunks each (every request "
              "1048576 samples (--batch), split at --max-batch 32) = 6.55e+08 chunks, "
              "more than the 1e8"));
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
    const chip from_cr = io::chip_from_ini(io::parse_ini("\xEF\xBB\xBF" + ini));
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
    CHECK(t.status == cli::exit_usage);
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
    // A whole number in exponent form is an integer (the docs write 1e5); a fraction is not.
    CHECK(io::parse_int("1e5", "--requests") == 100000);
    CHECK(io::parse_int("2.5E3", "--requests") == 2500);
    CHECK(has(message_of([] { (void)io::parse_int("1.5e0", "--top"); }), "expected an integer"));
    CHECK(has(message_of([] { (void)io::parse_int("1e30", "--top"); }), "expected an integer"));
    // Exactly, in integers: past 2^53 a double would round, and a digit below the point is not
    // a whole number however small.
    CHECK(io::parse_int("9007199254740993e0", "--n") == 9007199254740993);
    CHECK(io::parse_int("-2.5E3", "--n") == -2500);
    CHECK(io::parse_int("1.50e1", "--n") == 15);
    CHECK(io::parse_int("0e5", "--n") == 0);
    CHECK(io::parse_int("9.223372036854775807e18", "--n") == 9223372036854775807);
    CHECK(has(message_of([] { (void)io::parse_int("1.00000000000000001e3", "--n"); }),
              "expected an integer"));
    CHECK(has(message_of([] { (void)io::parse_int("9.223372036854775808e18", "--n"); }),
              "expected an integer"));
    CHECK(has(message_of([] { (void)io::parse_int("1e", "--n"); }), "expected an integer"));
    CHECK(has(message_of([] { (void)io::parse_int("e5", "--n"); }), "expected an integer"));
    CHECK(has(message_of([] { (void)io::parse_double(std::string("1\0", 2), "--qps"); }),
              "'1\\x00', expected a finite number"));
}

TEST_CASE("an extension in any letter case, after a name") {
    static_assert(io::has_extension("m.ONNX", ".onnx"));
    CHECK(io::has_extension("dir/m.Model", ".model"));
    CHECK(!io::has_extension(".onnx", ".onnx"));  // a name is needed before it
    CHECK(!io::has_extension("m.onnx.txt", ".onnx"));
    CHECK(!io::has_extension("monnx", ".onnx"));
}

TEST_CASE("huge numbers print in exponent form, not as hundreds of digits") {
    CHECK(io::format_fixed(1e300, 1) == "1e+300");
    CHECK(io::format_fixed(-2.5e20, 0) == "-2.5e+20");
    CHECK(io::format_fixed(123456.789, 1) == "123456.8");
    CHECK(io::format_fixed(999999999999999.0, 0) == "999999999999999");
}

// ---- serving and whatif flags: plausible ranges ---------------------------------------------

TEST_CASE("serving and whatif flags outside their ranges name the flag, the value and the range") {
    const std::vector<std::string_view> one{"--streams",  "1",   "--cube",      "24",
                                            "--vector",   "48",  "--max-batch", "16",
                                            "--requests", "1000"};
    auto with = [&](const std::vector<std::string_view>& more) {
        return run_command(cli::whatif_command, perfcast_test::with_flags(one, more));
    };
    struct bad_flag {
        std::vector<std::string_view> args;
        std::string_view message;
    };
    const std::vector<bad_flag> cases{
        {{"--qps", "0"}, "option '--qps': '0' is not a load in [0.001, 1e+09] requests/s per card"},
        {{"--qps", "100,2e9"}, "option '--qps': '2e9' is not a load in [0.001, 1e+09]"},
        {{"--qps", "1e-300"}, "option '--qps': '1e-300' is not a load in [0.001, 1e+09]"},
        {{"--p99-ms", "1e-6"},
         "option '--p99-ms': '1e-6' is not a TP99 target in [0.001, 1e+09] ms"},
        {{"--p99-ms", "1e10"}, "option '--p99-ms': '1e10' is not a TP99 target in [0.001, 1e+09]"},
        {{"--qps", "100", "--window-ms", "-1"},
         "option '--window-ms': '-1' is not a batching window in [0, 60000] ms"},
        {{"--qps", "100", "--window-ms", "1e299"},
         "option '--window-ms': '1e299' is not a batching window in [0, 60000] ms"},
        {{"--p99-ms", "5", "--traffic", "1e13"},
         "option '--traffic': '1e13' is not a traffic in [0.001, 1e+12] requests/s"},
        {{"--p99-ms", "5", "--traffic", "1000", "--headroom", "0.9999999999"},
         "option '--headroom': '0.9999999999' is not a share of each card kept free in [0, 0.99]"},
        {{"--qps", "100", "--streams", "65"},
         "option '--streams': 65 is not a stream count per card in [1, 64]"},
        {{"--qps", "100", "--max-batch", "5000"},
         "option '--max-batch': 5000 is not a largest gear in [1, 4096]"},
        {{"--qps", "100", "--requests", "999"},
         "option '--requests': '999' is not a whole number in 1000..100000000"},
    };
    for (const bad_flag& c : cases) {
        CAPTURE(c.message);
        const auto r = with(c.args);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, c.message));
    }
    // Card mode.
    auto card = [](std::vector<std::string_view> a) {
        return run_command(cli::whatif_command, std::move(a));
    };
    auto r = card({"--latency-ms", "2e9"});
    CHECK(r.status == cli::exit_usage);
    CHECK(has(r.err, "option '--latency-ms': '2e9' is not a latency in [0.001, 1e+09] ms"));
    r = card({"--streams", "1-65"});
    CHECK(has(r.err, "option '--streams': 65 is not a stream count per card in [1, 64]"));
    r = card({"--batch", "2000000"});
    CHECK(has(r.err, "option '--batch': 2000000 is not a batch size in [1, 1048576]"));
    r = card({"--cube", "2000000"});
    CHECK(has(r.err, "option '--cube': 2000000 is too large (at most 1000000)"));
    // The ends of the ranges are accepted: the loosest target is the issue's own 1e9 ms.
    r = with({"--p99-ms", "1e9", "--simulate-top", "1"});
    CHECK(r.status == cli::exit_ok);
    CHECK(has(r.out, "capped at saturation"));
    r = with({"--qps", "0.001", "--window-ms", "60000", "--simulate-top", "1"});
    CHECK(r.status == cli::exit_ok);
}

// ---- item 3 (of the brief): no inf, nan or wall of digits in any output ----------------------

namespace {

/// Whether `text` holds a word "inf", "nan" (any case) or a run of 20 digits: what a table, CSV or
/// JSON shows when a non-finite or absurd number slips through.
bool unreadable_number(std::string_view text) {
    std::size_t digits = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        digits = ch >= '0' && ch <= '9' ? digits + 1 : 0;
        if (digits >= 20) return true;
        const auto word_at = [&](std::string_view w) {
            if (i + w.size() > text.size()) return false;
            for (std::size_t k = 0; k < w.size(); ++k) {
                const char a = text[i + k];
                const char lower = a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a;
                if (lower != w[k]) return false;
            }
            const auto letter = [](char x) {
                return (x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') || x == '_';
            };
            return (i == 0 || !letter(text[i - 1])) &&
                   (i + w.size() == text.size() || !letter(text[i + w.size()]));
        };
        if (word_at("inf") || word_at("nan") || word_at("infinity")) return true;
    }
    return false;
}

}  // namespace

TEST_CASE("unreadable_number finds inf, nan and digit walls, and only them") {
    CHECK(unreadable_number("latency_us    inf"));
    CHECK(unreadable_number("\"x\": NaN,"));
    CHECK(unreadable_number("1,2,inf,3"));
    CHECK(unreadable_number("123456789012345678901234567890.0"));
    CHECK_FALSE(unreadable_number("infer, info, cube_inf_rate, 1e+300, 12345678901234567"));
}

TEST_CASE("a profile row of 1e-300 us: no inf GB/s or inf % in the report, any format") {
    const scratch_dir d("tiny");
    const std::string csv = (d.path / "tiny.csv").string();
    spit(csv,
         "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,Output "
         "Shapes,Output Data Types,aic_total_cycles,Start Time(us)\n"
         "MatMul,AI_CORE,1e-300,24,\"128,256;256,512\",fp16;fp16,\"128,512\",fp16,1e19,0\n"
         "Add,AI_VECTOR_CORE,1e-300,24,\"128,256;256,512\",fp16;fp16,\"128,512\",fp16,1e19,1\n");
    for (std::string_view format : {"table", "csv", "json"}) {
        CAPTURE(format);
        const auto r =
            run_command(cli::report_command, {csv, "--chip", "910B1", "--format", format});
        CHECK(r.status == cli::exit_ok);
        CHECK_FALSE(unreadable_number(r.out));
    }
    // validate scores no time under profile::min_measured_us (an error relative to 1e-300 us
    // is any size): nothing scored, said, rather than a MAPE of 1e302 %.
    const auto v = run_command(cli::validate_command, {"--chip", "910B1", "--test", csv});
    CHECK(v.status == cli::exit_failure);
    CHECK(v.err.find("nothing scored") != std::string::npos);
    CHECK(v.err.find("(2 no_duration; line 2") != std::string::npos);
    CHECK(v.err.find("a duration of 1e-300 us, under the least scored (0.001 us)") !=
          std::string::npos);
    CHECK_FALSE(unreadable_number(v.out));
}

TEST_CASE("profile rows of more than a day or 1e20 cycles are refused with line and column") {
    const scratch_dir d("long");
    const std::string head =
        "Type,Accelerator Core,Duration(us),Block Dim,aic_total_cycles,Wait Time(us)\n";
    const std::string csv = (d.path / "long.csv").string();
    spit(csv, head + "MatMul,AI_CORE,1e308,24,1,0\nAdd,AI_CORE,1e308,24,1,0\n");
    auto r = run_command(cli::report_command, {csv, "--chip", "910B1"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err,
              "long.csv:2:16: a time over a day (86400000000 us) in column "
              "'Duration(us)': \"1e308\""));
    spit(csv, head + "MatMul,AI_CORE,1,24,1e21,0\n");
    r = run_command(cli::report_command, {csv, "--chip", "910B1"});
    CHECK(has(r.err,
              "long.csv:2:21: more cycles than 65536 cores at 10 GHz run in a day (1e20) "
              "in column 'aic_total_cycles'"));
    spit(csv, head + "MatMul,AI_CORE,1,24,1,9e10\n");
    r = run_command(cli::report_command, {csv, "--chip", "910B1"});
    CHECK(has(r.err, "a time over a day (86400000000 us) in column 'Wait Time(us)'"));
    // A day exactly is still a time.
    spit(csv, head + "MatMul,AI_CORE,86400000000,24,1,0\n");
    CHECK(run_command(cli::report_command, {csv, "--chip", "910B1"}).status == cli::exit_ok);
    // A header and no row is no profile: an error, not "Findings (0) none", which reads as a
    // clean bill of health.
    spit(csv, head);
    r = run_command(cli::report_command, {csv, "--chip", "910B1"});
    CHECK(r.status == cli::exit_failure);
    CHECK(has(r.err, "long.csv: holds no row (a header and nothing else)"));
    CHECK(r.out.empty());
}

TEST_CASE("a chip whose memory rate would make latencies infinite is refused by name") {
    chip c = chips::ascend910b1;
    c.memory.core_read_rate = bytes_per_cycle{1e-300, units::B_per_cycle};
    CHECK(has(message_of([&] { (void)validate(c); }),
              "memory.core_read_rate = 1e-300, expected a rate in [0.001, 1e6] bytes per cycle"));
    c = chips::ascend910b1;
    c.memory.hbm_bandwidth = bandwidth{1e-300, units::Bps};
    CHECK(has(message_of([&] { (void)validate(c); }), "a bandwidth between 1 MB/s and 1 PB/s"));
    c = chips::ascend910b1;
    c.memory.hbm_size = data_size{1e300, units::B};
    CHECK(has(message_of([&] { (void)validate(c); }), "a size in [1 B, 1 PiB]"));
    c = chips::ascend910b1;
    c.cube.ops_per_cycle[0] = 1e-300;
    CHECK(has(message_of([&] { (void)validate(c); }), "0 or a rate in [1e-6, 1e9] ops per cycle"));
    // At the slowest rates the ranges allow, the largest op still has a finite, readable latency.
    c = chips::ascend910b1;
    c.memory.core_read_rate = bytes_per_cycle{1e-3, units::B_per_cycle};
    c.memory.core_write_rate = bytes_per_cycle{1e-3, units::B_per_cycle};
    c.memory.hbm_bandwidth = bandwidth{1e6, units::Bps};
    CHECK_NOTHROW((void)validate(c));
    const op_cost big = cost(c, elementwise(std::int64_t{1} << 46, dtype::fp32), core_count{1});
    CHECK(is_finite(big.latency));
}

TEST_CASE("serving: a saturated analytic load is null with a state in JSON, empty in CSV") {
    const std::vector<std::string_view> base{"--qps",       "1e9", "--streams",  "1",
                                             "--cube",      "24",  "--vector",   "48",
                                             "--max-batch", "16",  "--requests", "1000"};
    for (std::string_view format : {"table", "csv", "json"}) {
        CAPTURE(format);
        std::vector<std::string_view> a = base;
        a.insert(a.end(), {"--format", format});
        const auto r = run_command(cli::whatif_command, a);
        REQUIRE(r.status == cli::exit_ok);
        CHECK_FALSE(unreadable_number(r.out));
        if (format == "json") {
            CHECK(has(r.out, "\"analytic_p99_ms\": null"));
            CHECK(has(r.out, "\"analytic_state\": \"saturated\""));
        }
        if (format == "csv") {
            CHECK(has(r.out, ",analytic_state\n"));
            CHECK(has(r.out, ",saturated\n"));
        }
    }
}

}  // namespace test_edges
