// `perfcast op`: one op flag at a time, the flags that do not apply to it refused (not ignored),
// the core limit checked against the chip, and the errors of its op factories and size parser as
// the command prints them. Its json fields and --params: test_calibration.cpp; --line against the
// shortcut flags: test_op_vocabulary.cpp.
#include <doctest/doctest.h>

#include <perfcast/io/parse.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/cli.hpp"
#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_cli_op {

namespace {

using namespace perfcast;
using perfcast_test::run_command;

using perfcast_test::has;

struct refusal {
    std::vector<std::string_view> args;
    std::string_view message;
};

}  // namespace

TEST_CASE("perfcast op: contradictory flags and flags that do not apply are usage errors") {
    const refusal cases[] = {
        // Two op flags, --transfer among them.
        {{"--transfer", "4MiB", "--matmul", "2,2,2"},
         "give exactly one of --matmul, --elementwise, --shapes, --reduce, --softmax, --norm, "
         "--gather, --topk, --transpose, --line or --transfer, not --matmul and --transfer "
         "together"},
        {{"--matmul", "2,2,2", "--elementwise", "5", "--topk", "1,2,1"},
         "not --matmul, --elementwise and --topk together"},
        {{}, "give exactly one of --matmul"},
        // A core flag for another engine.
        {{"--chip", "910B1", "--matmul", "4096,4096,4096", "--vector", "5"},
         "--vector sets the vector cores, but a matmul runs on the cube: use --cube"},
        {{"--elementwise", "5", "--cube", "3"},
         "--cube sets the cube cores, but an elementwise runs on the vector cores: use --vector"},
        {{"--topk", "4,100,10", "--dtype", "int32", "--vector", "3"},
         "--vector sets the vector cores, but a topk of int32 runs on the AI CPU: use --limit"},
        {{"--line", "attention 1,16,512,128;1,16,512,128 fp16", "--vector", "8"},
         "but an attention runs on the cube: use --cube"},
        // --limit with --cube or --vector, in either order.
        {{"--matmul", "64,64,64", "--limit", "5", "--cube", "12"},
         "options '--limit' and '--cube' both set the op's core limit: give --cube (the cube "
         "cores) or --limit (the cores of whichever engine the op runs on), not both"},
        {{"--cube", "12", "--matmul", "64,64,64", "--limit", "5"},
         "options '--limit' and '--cube' both set the op's core limit"},
        {{"--elementwise", "5", "--vector", "4", "--limit", "5"},
         "options '--limit' and '--vector' both set the op's core limit"},
        // A flag of another op.
        {{"--link", "pcie5x4", "--matmul", "2,2,2"},
         "option '--link' does not apply to --matmul: --link sets the host link of --transfer"},
        {{"--transfer", "4MiB", "--cube", "3"},
         "option '--cube' does not apply to --transfer: --cube sets the cube cores of a device op "
         "(a transfer holds no cores)"},
        {{"--transfer", "4MiB", "--limit", "3"}, "option '--limit' does not apply to --transfer"},
        {{"--transfer", "4MiB", "--dtype", "fp32"},
         "option '--dtype' does not apply to --transfer"},
        {{"--line", "reduce 8,4 fp16", "--dtype", "fp32"},
         "option '--dtype' does not apply to --line: --dtype sets the dtype of a shortcut op "
         "flag's op (a --line names its own"},
        {{"--elementwise", "5", "--valid", "3"},
         "option '--valid' does not apply to --elementwise: --valid sets the valid length of "
         "--topk"},
        {{"--shapes", "1,4;4,1", "--inputs", "3"},
         "option '--inputs' does not apply to --shapes: --inputs sets the inputs of --elementwise "
         "(--shapes has two)"},
        {{"--reduce", "8,4", "--batch", "2"}, "option '--batch' does not apply to --reduce"},
        {{"--topk", "8,300,10", "--broadcast-b"},
         "option '--broadcast-b' does not apply to --topk"},
        {{"--matmul", "2,2,2", "--hot", "0.5"}, "option '--hot' does not apply to --matmul"},
        {{"--softmax", "8,4", "--ops-per-element", "3"},
         "option '--ops-per-element' does not apply to --softmax"},
        {{"--line", "topk 8,300 fp16 k=10", "--batch", "8"},
         "option '--batch' does not apply to this --line: --batch sets B, and the line has no B"},
    };
    for (const refusal& c : cases) {
        INFO(c.message);
        const auto r = run_command(cli::op_command, c.args);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, c.message));
        CHECK(has(r.err, "Usage: perfcast op"));
        CHECK(r.out.empty());
    }
}

TEST_CASE("perfcast op: the flags that apply still do") {
    // --limit alone sets the cores of whichever engine the op runs on, the AI CPU's included.
    const auto aicpu = run_command(cli::op_command, {"--topk", "4,100,10", "--dtype", "int32",
                                                     "--limit", "2", "--format", "json"});
    REQUIRE(aicpu.status == 0);
    CHECK(has(aicpu.out, "\"engine\": \"aicpu\""));
    CHECK(has(aicpu.out, "\"cores\": 2"));
    const auto limit = run_command(cli::op_command, {"--matmul", "128,300,32", "--batch", "8",
                                                     "--limit", "12", "--format", "json"});
    const auto cube = run_command(cli::op_command, {"--matmul", "128,300,32", "--batch", "8",
                                                    "--cube", "12", "--format", "json"});
    REQUIRE(cube.status == 0);
    CHECK(has(cube.out, "\"cores\": 12"));
    CHECK(limit.out == cube.out);
    // A cube op read from a line takes --cube; B in the line takes --batch.
    const auto attention = run_command(
        cli::op_command, {"--cube", "12", "--line", "attention B,16,512,128;B,16,512,128 fp16",
                          "--batch", "2", "--format", "json"});
    REQUIRE(attention.status == 0);
    CHECK(has(attention.out, "\"cores\": 12"));
    const auto transfer = run_command(
        cli::op_command, {"--chip", "910B1", "--transfer", "4MiB", "--link", "pcie5x4"});
    REQUIRE(transfer.status == 0);
    CHECK(has(transfer.out, "pcie5x4"));
}

TEST_CASE("perfcast op: an AI CPU op on a GPU, and a params file of another chip, are said") {
    // The GPU presets have no AI CPU: an integer TopK (guide §8: the AI CPU's) runs on the
    // vector engine, as whatif runs such ops (engine_on), and the command says so.
    const auto gpu = run_command(cli::op_command, {"--chip", "h100", "--topk", "4,100,10",
                                                   "--dtype", "int32", "--format", "json"});
    REQUIRE(gpu.status == 0);
    CHECK(has(gpu.out, "\"engine\": \"vector\""));
    CHECK(has(gpu.err, "h100-sxm has no AI CPU: the op runs on its vector engine"));
    const auto npu = run_command(cli::op_command,
                                 {"--topk", "4,100,10", "--dtype", "int32", "--format", "json"});
    CHECK(has(npu.out, "\"engine\": \"aicpu\""));
    CHECK(npu.err.empty());
    // A params file fitted for the 910B1, applied to an H100: applied, with a warning.
    const perfcast_test::scratch_dir dir("cli_op_params");
    const std::string params = (dir.path / "b1.params").string();
    std::ofstream(params) << "chip = ascend910b1\nhead.cube.launch_us = 12\n";
    const auto other = run_command(cli::op_command,
                                   {"--chip", "h100", "--params", params, "--matmul", "64,64,64"});
    REQUIRE(other.status == 0);
    CHECK(has(other.err,
              "perfcast: warning: " + params + " was fitted for ascend910b1, not h100-sxm"));
    const auto same = run_command(cli::op_command,
                                  {"--chip", "910B1", "--params", params, "--matmul", "64,64,64"});
    CHECK(same.err.empty());
}

TEST_CASE("perfcast op: a core limit past the chip's names the flag, the bound and the chip") {
    const refusal cases[] = {
        {{"--matmul", "2,2,2", "--cube", "100"},
         "perfcast op: perfcast::op: --cube = 100, expected at most 24 (the cube cores of "
         "ascend910b1)"},
        {{"--elementwise", "5", "--limit", "49"},
         "perfcast::op: --limit = 49, expected at most 48 (the vector cores of ascend910b1)"},
        {{"--chip", "H200", "--matmul", "2,2,2", "--cube", "200"},
         "--cube = 200, expected at most 132 (the cube cores of h200-sxm)"},
        {{"--elementwise", "5", "--vector", "0"}, "--vector = 0, expected at least 1 core"},
        // Not wrapped to 12 by a cast to int.
        {{"--matmul", "2,2,2", "--cube", "4294967308"},
         "--cube = 4294967308, expected at most 24 (the cube cores of ascend910b1)"},
        {{"--elementwise", "5", "--inputs", "4294967298"},
         "perfcast::op: --inputs = 4294967298, expected an integer in [-2147483648, 2147483647]"},
        // Nor -4294967294 to 2 (the factory's own check then names the real bound).
        {{"--elementwise", "5", "--inputs", "-4294967294"},
         "perfcast::op: --inputs = -4294967294, expected an integer in [-2147483648, "
         "2147483647]"},
    };
    for (const refusal& c : cases) {
        INFO(c.message);
        const auto r = run_command(cli::op_command, c.args);
        // A flag's value out of its range is a usage error: exit 2, the synopsis under it.
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, c.message));
        CHECK(has(r.err, "Usage: perfcast op"));
        CHECK(has(r.err, "'perfcast op --help' lists every option."));
    }
}

TEST_CASE("perfcast op: the op factories' errors name the op, the field, the value and the bound") {
    const refusal cases[] = {
        {{"--shapes", "1,4000;400,2"},
         "perfcast::elementwise_broadcast: dimension 1 of [1, 4000] and [400, 2] = 4000 and 2, "
         "expected broadcast-compatible sizes (equal, or 1 in one of them)"},
        {{"--matmul", "0,0,0"}, "perfcast op: perfcast::matmul: m = 0, expected a dimension >= 1"},
        {{"--matmul", "2,2,2", "--batch", "0"}, "perfcast::batch_matmul: batch = 0"},
        {{"--topk", "4,100,10", "--valid", "200"},
         "perfcast::topk: valid = 200, expected 1 <= valid <= length (100), or 0: the whole "
         "length"},
        {{"--topk", "4,100,10", "--valid", "5"},
         "perfcast::topk: k = 10, expected k <= valid (5): a TopK keeps k of the valid elements"},
        {{"--topk", "4,100,10", "--valid", "-1"}, "valid = -1, expected 1 <= valid <= length"},
        {{"--topk", "4,8,10"}, "perfcast::topk: k = 10, expected k <= length (8)"},
        // A broadcast that fails at this batch only: the node, its shapes and the batch.
        {{"--line", "broadcast 2,300;B,300 fp32", "--batch", "3"},
         "perfcast::instantiate: broadcast input dimension 0 = 2, expected 1 or the output's 3 "
         "(node 'broadcast': input [2, 300] to output [B, 300] at batch 3)"},
        // One that fails at every batch: refused where the line is read.
        {{"--line", "broadcast 2,300;3,300 fp32"},
         "perfcast::model_file: --line:1:11: op = \"broadcast\", expected valid arguments "
         "(perfcast::nodes::broadcast: input dimension 0 = 2, expected 1 or the output's 3 (input "
         "[2, 300] to output [3, 300]))"},
        {{"--line", "topk 8,300 fp16 k=10 valid=5"},
         "--line:1:28: valid = \"5\", expected a valid length from k (10) to the length (300), or "
         "0: the whole length"},
    };
    for (const refusal& c : cases) {
        INFO(c.message);
        const auto r = run_command(cli::op_command, c.args);
        CHECK(r.status == cli::exit_usage);  // the op is the flags: a usage error
        CHECK(has(r.err, c.message));
    }
    // A factory field that a flag of another name sets: the flag is named, a usage error.
    const refusal flagged[] = {
        {{"--elementwise", "5", "--ops-per-element", "1e300"},
         "option '--ops-per-element': perfcast::elementwise: ops_per_element = 1e+300, expected a "
         "count per element in (0, 1e9)"},
        {{"--gather", "5", "--row-bytes", "1PiB"},
         "option '--row-bytes': perfcast::gather: row_bytes = 1125899906842624, expected a row "
         "size in [1, 1e15) bytes"},
        {{"--gather", "5", "--hot", "1.5"}, "option '--hot': perfcast::gather: hot_fraction = 1.5"},
        {{"--gather", "5", "--table-rows", "0"},
         "option '--table-rows': perfcast::gather: table_rows = 0"},
    };
    for (const refusal& c : flagged) {
        INFO(c.message);
        const auto r = run_command(cli::op_command, c.args);
        CHECK(r.status == cli::exit_usage);
        CHECK(has(r.err, c.message));
    }
    // The matmul the user asked for is named, not the batch matmul it is built as.
    CHECK_FALSE(has(run_command(cli::op_command, {"--matmul", "0,0,0"}).err, "batch_matmul"));
    // The same broadcast at the one batch where it holds.
    CHECK(run_command(cli::op_command, {"--line", "broadcast 2,300;B,300 fp32", "--batch", "2"})
              .status == 0);
}

TEST_CASE("perfcast op --topk --valid: 0 is the whole length, K to LEN a valid length") {
    const auto json = [](std::vector<std::string_view> extra) {
        std::vector<std::string_view> args{"--topk", "4,100,10", "--format", "json"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_command(cli::op_command, args);
        REQUIRE(r.status == 0);
        return r.out;
    };
    const std::string all = json({});
    CHECK(json({"--valid", "0"}) == all);
    CHECK(json({"--valid", "100"}) == all);
    const std::string ten = json({"--valid", "10"});
    CHECK(ten != all);
    CHECK(has(ten, "\"bytes\": 320"));  // 4 rows x 10 fp16 read, 4 x 10 x (2 + 4) B written
}

TEST_CASE("perfcast op: a latency floor is shown as floor_us, so the terms add up") {
    const auto run = [](std::vector<std::string_view> args) {
        args.insert(args.end(), {"--format", "json"});
        const auto r = run_command(cli::op_command, args);
        INFO(r.err);
        REQUIRE(r.status == 0);
        return r.out;
    };
    // An A100 norm of 4096 rows of 4096: its row trips (chip::overhead.row_trip_cycles) hold it
    // past head + max(compute, memory) + 0.1 x min (the default overlap 0.9).
    const std::string norm = run({"--chip", "A100", "--norm", "4096,4096", "--dtype", "fp16"});
    const auto num = [&](std::string_view k) { return perfcast_test::json_number(norm, k); };
    const double terms = num("head_us") + std::max(num("compute_us"), num("memory_us")) +
                         0.1 * std::min(num("compute_us"), num("memory_us"));
    REQUIRE(has(norm, "\"floor_us\""));
    CHECK(num("floor_us") > 1.0);
    // Within 0.002 us: five figures, each rounded to 3 decimals.
    CHECK(std::abs(terms + num("floor_us") - num("latency_us")) <= 0.002);
    // A GEMM on the 910B1 has no floor: no field.
    CHECK_FALSE(
        has(run({"--chip", "910B1", "--matmul", "128,300,32", "--dtype", "fp16"}), "floor_us"));
}

TEST_CASE("perfcast op: sizes in every unit the message lists, up to 1 PiB") {
    const auto bytes = [](std::string_view size) {
        const auto r = run_command(cli::op_command, {"--transfer", size, "--format", "json"});
        INFO(size, r.err);
        REQUIRE(r.status == 0);
        return perfcast_test::json_number(r.out, "bytes");
    };
    CHECK(bytes("1TB") == 1e12);
    CHECK(bytes("1TiB") == 1099511627776.0);
    CHECK(bytes("32Mbit") == 4e6);
    CHECK(bytes("1PiB") == 1125899906842624.0);
    const auto refused = [](std::string_view flag, std::string_view size) {
        std::vector<std::string_view> args{flag, size};
        if (flag == "--row-bytes") args.insert(args.begin(), {"--gather", "5"});
        const auto r = run_command(cli::op_command, args);
        CHECK(r.status == cli::exit_usage);  // a flag's value: a usage error
        return r.err;
    };
    CHECK(has(refused("--transfer", "1XB"),
              "--transfer = '1XB', expected a size in a supported unit ('XB' is not one): B, KB, "
              "MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB, bit, Kbit, Mbit or Gbit"));
    CHECK(
        has(refused("--transfer", "1024"), "--transfer = '1024', expected a size with a unit: B"));
    CHECK(has(refused("--row-bytes", "-64B"),
              "--row-bytes = '-64B', expected a size between 0 B and 1 PiB (1125899906842624 B)"));
    CHECK(has(refused("--transfer", "2PB"), "expected a size between 0 B and 1 PiB"));
}

TEST_CASE("parse_size: every unit its message lists is accepted, and none it does not list") {
    // The list the errors print, split into its units.
    std::vector<std::string> listed;
    std::string text(io::size_units_text);
    for (std::string_view sep : {", ", " or "}) {
        for (std::size_t at = text.find(sep); at != std::string::npos; at = text.find(sep))
            text.replace(at, sep.size(), " ");
    }
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t end = std::min(text.find(' ', pos), text.size());
        listed.push_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    REQUIRE(listed.size() == 15);
    for (const std::string& u : listed) {
        INFO(u);
        CHECK(io::parse_size("1" + u, "--size").in(units::B) > 0);
    }
    CHECK(io::parse_size("1PB", "--size").in(units::B) == 1e15);
    CHECK(io::parse_size("2Kbit", "--size").in(units::B) == 250);
    CHECK(io::parse_size("1GiB", "--size").in(units::B) == 1073741824.0);
    for (std::string_view unlisted : {"1EB", "1kb", "1Tbit", "1 bytes"}) {
        INFO(unlisted);
        CHECK_THROWS_WITH_AS((void)io::parse_size(unlisted, "--size"),
                             doctest::Contains("is not one): B, KB"), perfcast::error);
    }
}

}  // namespace test_cli_op
