// Whether a deployment's instances fit the card's memory (device_memory.hpp), and what the
// sweeps do with one that does not: whatif ranks it last, off the front and the pick; the serving
// sweep leaves it out; --gains marks the change. Sizes are checked exactly: every figure is a sum
// of whole bytes, far below 2^53.
#include <doctest/doctest.h>

#include "support.hpp"

#include <perfcast/chips.hpp>
#include <perfcast/deployment_gains.hpp>
#include <perfcast/device_memory.hpp>
#include <perfcast/distribution.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/io/whatif_report.hpp>
#include <perfcast/scenario.hpp>
#include <perfcast/serving_sweep.hpp>
#include <perfcast/whatif.hpp>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_device_memory {

using namespace perfcast;
using namespace perfcast::literals;

namespace {

using perfcast_test::has;

// Two lookups of one table (1000 x 32 fp16), one of another (500 x 16 fp32), a matmul with a
// 64 x 128 fp16 weight.
constexpr std::string_view small_text = R"(name small
gather B*26;1000,32 fp16
gather B*26;1000,32 fp16
gather B*2;500,16 fp32
matmul B,64;64,128 fp16
)";

// A table of 200 M rows of 64 fp32 (51.2 GB, 47.7 GiB): one instance fits a 64 GiB card, two do
// not.
constexpr std::string_view big_text = R"(name big
transfer B,26 int64 dir=in
gather B*26;200000000,64 fp32
matmul B,64;64,1024 fp16
)";

perfcast_test::cli_run whatif(std::vector<std::string_view> args) {
    return perfcast_test::run_command(cli::whatif_command, std::move(args));
}

}  // namespace

TEST_CASE("memory_of: weights per line, each distinct table once, the largest node's working set") {
    const model m = io::parse_model(small_text, "small");
    const memory_need n = memory_of(chips::ascend910b1, m, batch_size{4});
    CHECK(n.batch == batch_size{4});
    CHECK(n.weights.in(units::B) == 64.0 * 128 * 2);
    CHECK(n.tables.in(units::B) == 1000.0 * 32 * 2 + 500.0 * 16 * 4);
    // A lookup of 4 x 26 rows: int32 indices and the rows it writes, 416 + 6656 bytes; the
    // matmul: A and its output, 512 + 1024 bytes; the second table's lookup 32 + 512.
    CHECK(n.working.in(units::B) == 4.0 * 26 * 4 + 4.0 * 26 * 32 * 2);
    CHECK(n.largest == 0);
    // The working set grows with the batch; weights and tables do not.
    const memory_need big = memory_of(chips::ascend910b1, m, batch_size{64});
    CHECK(big.working.in(units::B) == 64.0 * 26 * 4 + 64.0 * 26 * 32 * 2);
    CHECK(big.weights == n.weights);
    CHECK(big.tables == n.tables);
    // A table of another dtype, or of other rows, is another table.
    const model two = io::parse_model(
        "gather B;1000,32 fp16\ngather B;1000,32 fp32\n"
        "gather B;1001,32 fp16\n",
        "two");
    CHECK(memory_of(chips::ascend910b1, two, batch_size{1}).tables.in(units::B) ==
          1000.0 * 32 * 2 + 1000.0 * 32 * 4 + 1001.0 * 32 * 2);
}

TEST_CASE("memory_of: tensors, not bytes moved; a shared B once; fixed lines; experts whole") {
    // A batched matmul whose B (8 x 4096 x 4096 fp16, 256 MiB) is shared by the batch: a weight,
    // read once a batch element (bytes moved: 64 x 256 MiB), held once.
    const model bmm = io::parse_model("bmm B,8,1,4096;1,8,4096,4096 fp16\n", "bmm");
    const memory_need b = memory_of(chips::ascend910b1, bmm, batch_size{64});
    CHECK(b.weights.in(units::MiB) == 256.0);
    // Its working set: A (64 x 8 x 4096) and the output (64 x 8 x 4096), fp16.
    CHECK(b.working.in(units::B) == 2.0 * 64 * 8 * 4096 * 2);
    // A line without B (fixed=1): its output only (its inputs may be weights the instances
    // share), and no weights.
    const model fixed = io::parse_model("matmul 1,4096;4096,4096 fp16 fixed=1\n", "fixed");
    const memory_need f = memory_of(chips::ascend910b1, fixed, batch_size{8});
    CHECK(f.weights.in(units::B) == 0.0);
    CHECK(f.working.in(units::B) == 4096.0 * 2);
    // A grouped matmul's experts are held whole, whatever few tokens reach them.
    const model moe = io::parse_model("grouped_matmul B*2,1024;64,1024,1024 fp16\n", "moe");
    const double experts = 64.0 * 1024 * 1024 * 2;
    CHECK(memory_of(chips::ascend910b1, moe, batch_size{1}).weights.in(units::B) == experts);
    CHECK(memory_of(chips::ascend910b1, moe, batch_size{256}).weights.in(units::B) == experts);
    // A convolution's third shape is its output: counted once.
    const model conv = io::parse_model("conv B,16,32,32;32,16,3,3;B,32,30,30 fp16\n", "conv");
    const memory_need cv = memory_of(chips::ascend910b1, conv, batch_size{2});
    CHECK(cv.weights.in(units::B) == 32.0 * 16 * 3 * 3 * 2);
    CHECK(cv.working.in(units::B) == (2.0 * 16 * 32 * 32 + 2.0 * 32 * 30 * 30) * 2);
    // A broadcast's second shape and a row kernel's (SwiGlu B,2I;B,I) are the output; a tile's
    // second shape is its multiples.
    const auto working_of = [](std::string_view line, std::int64_t batch) {
        return memory_of(chips::ascend910b1, io::parse_model(line, "one"), batch_size{batch})
            .working.in(units::B);
    };
    // (Its input, without B, is a weight: the working set is the output alone.)
    CHECK(working_of("broadcast 1,300;B,300 fp32\n", 4) == 4.0 * 300 * 4);
    CHECK(working_of("broadcast B,1,300;B,8,300 fp32\n", 4) == (4.0 * 300 + 4 * 8 * 300) * 4);
    CHECK(working_of("rowwise B,256;B,128 fp16\n", 4) == (4.0 * 256 + 4 * 128) * 2);
    CHECK(working_of("tile B,300,32;1,8,1 fp32\n", 2) == (2.0 * 300 * 32 + 2 * 8 * 300 * 32) * 4);
    // A concat of ten inputs: its 8th shape sums the 8th to the 10th input, left out.
    std::string ten = "concat ";
    for (int k = 0; k < 10; ++k) ten += std::string(k > 0 ? ";" : "") + "B,16";
    CHECK(working_of(ten + " fp32\n", 2) == (7.0 * 2 * 16 + 2 * 160) * 4);
}

TEST_CASE("memory_need::on_card: a copy per instance or one shared, the reserve per instance") {
    memory_need n;
    n.weights = 1_GiB;
    n.tables = 3_GiB;
    n.working = 0.5_GiB;
    CHECK(n.on_card(stream_count{4}, {}).in(units::GiB) == 4 * (1 + 3 + 0.5));
    CHECK(n.on_card(stream_count{4}, {.copies = weight_copies::shared}).in(units::GiB) ==
          1 + 3 + 4 * 0.5);
    CHECK(n.on_card(stream_count{4}, {.reserve = 0.25_GiB}).in(units::GiB) ==
          4 * (1 + 3 + 0.5 + 0.25));
    // A card holds exactly its capacity: 64 GiB fits, a byte more does not.
    chip c = chips::ascend910b1;
    REQUIRE(c.memory.hbm_size.in(units::GiB) == 64.0);
    n.weights = 16_GiB;
    n.tables = 0_GiB;
    n.working = 0_GiB;
    CHECK(fits(c, n, stream_count{4}, {}));
    n.working = data_size{1, units::B};
    CHECK_FALSE(fits(c, n, stream_count{4}, {}));
    CHECK(fits(c, n, stream_count{4}, {.copies = weight_copies::shared}));
    CHECK(perfcast_test::message_of([] {
              validate(memory_rule{.reserve = data_size{-1, units::B}});
          }).find("reserve") != std::string::npos);
}

TEST_CASE("sweep: a deployment that does not fit ranks last, off the front, never the pick") {
    const model m = io::parse_model(big_text, "big");
    const whatif_grid g{.streams = counts<stream_count>({1, 2, 3}),
                        .cube = counts<core_count>({24}),
                        .vector = counts<core_count>({48}),
                        .batches = counts<batch_size>({16, 64})};
    const whatif_result r = sweep(chips::ascend910b1, m, g);
    REQUIRE(r.ranked.size() == 6);
    CHECK(r.unfit() == 4);  // 2 and 3 streams at both batches
    CHECK(r.capacity == chips::ascend910b1.memory.hbm_size);
    REQUIRE(r.memory.size() == 2);
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
        const candidate& x = r.ranked[i];
        CHECK(x.fits == (x.streams == 1));
        CHECK(x.fits == (i < 2));
        const memory_need& n = r.memory[x.batch == 16 ? 0 : 1];
        CHECK(x.memory == n.on_card(stream_count{x.streams}, {}));
    }
    // More streams would have the higher QPS: the memory, not the QPS, put them last.
    CHECK(r.ranked.back().qps > r.ranked.front().qps);
    for (std::size_t i : r.pareto) CHECK(r.ranked[i].fits);
    const selection pick = r.best_under(1000_ms);
    REQUIRE(pick.has_value());
    CHECK(pick->streams == 1);

    // Shared weights: every deployment fits, and three streams rank first.
    const whatif_result shared =
        sweep(chips::ascend910b1, m, g, {.memory = {.copies = weight_copies::shared}});
    CHECK(shared.unfit() == 0);
    CHECK(shared.ranked.front().streams == 3);

    // None fits (a card of 16 GiB): no pick, and the closest is the one needing the least.
    chip small = chips::ascend910b1;
    small.memory.hbm_size = 16_GiB;
    const whatif_result none = sweep(small, m, g);
    CHECK(none.unfit() == 6);
    CHECK(none.pareto.empty());
    const selection miss = none.best_under(1000_ms);
    CHECK_FALSE(miss.has_value());
    CHECK(miss.closest().streams == 1);
    CHECK(miss.closest().batch == 16);
    CHECK(has(miss.why(),
              "none of the candidates fits the card's memory; the smallest, 1 "
              "stream(s) of 24 cube / 48 vector cores at batch 16, needs at least 47.7"));

    // Some fit, none of them meets the target: the message says "that fit", since a deployment
    // that does not fit might meet it.
    const selection tight = r.best_under(duration{1e-6, units::ms});
    CHECK_FALSE(tight.has_value());
    CHECK(tight.closest().fits);
    CHECK(has(tight.why(), "none of the candidates that fit the card's memory meets 1e-06 ms"));
}

TEST_CASE("whatif report: the memory lines, the note of a row that does not fit, csv and json") {
    const model m = io::parse_model(big_text, "big");
    const whatif_grid g{.streams = counts<stream_count>({1, 2}),
                        .cube = counts<core_count>({24}),
                        .vector = counts<core_count>({48}),
                        .batches = counts<batch_size>({16})};
    const whatif_result r = sweep(chips::ascend910b1, m, g);
    const io::whatif_report rep{.model_name = "big", .model_nodes = 3, .chip_name = "ascend910b1"};
    std::ostringstream table;
    io::write_whatif_table(table, rep, r);
    CHECK(has(table.str(),
              "memory: weights 128 KiB and tables 47.7 GiB, a copy per instance; "
              "working set 106 KiB (batch 16)\n"
              "1 of 2 deployments need more than the card's 64 GiB: ranked last, on "
              "no front, never the pick\n"));
    CHECK(has(table.str(), "does not fit: 95.4 GiB"));
    std::ostringstream csv;
    io::write_whatif_csv(csv, rep, r);
    std::istringstream rows(csv.str());
    std::string line;
    REQUIRE(std::getline(rows, line));
    CHECK(line.ends_with(",memory_gib,fits"));
    for (const candidate& x : r.ranked) {
        REQUIRE(std::getline(rows, line));
        CHECK(line.ends_with("," + io::format_shortest(x.memory.in(units::GiB)) +
                             (x.fits ? ",1" : ",0")));
    }
    std::ostringstream json;
    io::write_whatif_json(json, rep, r);
    CHECK(has(json.str(), "\"copies\": \"per_instance\""));
    CHECK(perfcast_test::json_number(json.str(), "unfit") == 1.0);
    CHECK(has(json.str(), "\"fits\": false"));
    CHECK(perfcast_test::json_number(json.str(), "capacity_gib") == 64.0);
}

TEST_CASE("gib_above: the core headers' messages read above the capacity") {
    CHECK(gib_above(data_size{47.68, units::GiB}, 16_GiB) == "47.7 GiB");
    CHECK(gib_above(64_GiB + data_size{272, units::B}, 64_GiB) == "64.0000003 GiB");
    CHECK(gib_above(64_GiB + data_size{1, units::B}, 64_GiB) == "more than 64 GiB");
}

TEST_CASE("size_over: as many digits as it takes to read above the capacity") {
    CHECK(io::size_over(64_GiB + data_size{1, units::B}, 64_GiB) == "more than 64 GiB");
    CHECK(io::size_over(data_size{1000.5, units::GiB}, 1000_GiB) == "1000.5 GiB");
    CHECK(io::size_text(data_size{1023.99, units::KiB}) == "1 MiB");
    CHECK(io::size_text(data_size{100, units::MiB}, 5) == "100 MiB");
    CHECK(io::size_text(data_size{0, units::B}) == "0 B");
    CHECK(io::size_text(data_size{999.7, units::MiB}) == "1000 MiB");
    CHECK(io::size_text(data_size{1000.4, units::MiB}) == "1000 MiB");
    CHECK(io::size_over(data_size{64.004, units::GiB}, 64_GiB) == "64.004 GiB");
    CHECK(io::size_over(data_size{64.5, units::GiB}, 64_GiB) == "64.5 GiB");
    CHECK(io::size_over(data_size{143.2, units::GiB}, 80_GiB) == "143 GiB");
    CHECK(io::size_over(data_size{143.2, units::GiB}, 143_GiB) == "143.2 GiB");
    CHECK(io::size_text(data_size{512, units::B}) == "512 B");
    CHECK(io::size_text(data_size{38.5, units::KiB}) == "38.5 KiB");
}

TEST_CASE(
    "serving_sweeper: configurations that do not fit are left out, counted; none fitting is an "
    "error") {
    const model m = io::parse_model(big_text, "big");
    serving_grid g;
    g.streams = counts<stream_count>({1, 2});
    g.cube = counts<core_count>({24});
    g.vector = counts<core_count>({48});
    g.max_gears = {8, 16};
    const batch_distribution dist = batch_distribution::fixed(8);
    const serving_sweeper s(chips::ascend910b1, m, g, dist);
    CHECK(s.configurations().size() == 2);
    CHECK(s.unfit() == 2);
    for (const serving_config& k : s.configurations()) CHECK(k.streams == 1);
    CHECK(s.memory().size() == 2);
    CHECK(s.capacity() == chips::ascend910b1.memory.hbm_size);
    const serving_sweeper shared(chips::ascend910b1, m, g, dist,
                                 {.memory = {.copies = weight_copies::shared}});
    CHECK(shared.unfit() == 0);
    CHECK(shared.configurations().size() == 4);
    chip small = chips::ascend910b1;
    small.memory.hbm_size = 16_GiB;
    CHECK(has(perfcast_test::message_of([&] { const serving_sweeper none(small, m, g, dist); }),
              "the smallest, 1 stream(s) at max gear 8, needs at least 47.7 GiB of the card's "
              "16 GiB (a card with more memory)"));
    // Two streams on the 64 GiB card: one stream or shared tables would fit, a smaller gear not.
    serving_grid two = g;
    two.streams = counts<stream_count>({2});
    CHECK(has(perfcast_test::message_of(
                  [&] { const serving_sweeper none(chips::ascend910b1, m, two, dist); }),
              "(fewer streams, weights and tables shared between instances, a card with more "
              "memory)"));
}

TEST_CASE("what_each_change_buys: a change whose instances do not fit ranks last") {
    deployment_case d;
    d.c = chips::ascend910b1;
    d.m = std::make_shared<const model>(io::parse_model(big_text, "big"));
    d.batch = batch_size{16};
    d.instances = stream_count{1};
    d.split = {core_count{12}, core_count{24}};
    const deployment_gains g = what_each_change_buys(d);
    CHECK(g.fits);
    CHECK(g.memory == g.need.on_card(stream_count{1}, {}));
    REQUIRE_FALSE(g.changes.empty());
    const deployment_change& last = g.changes.back();
    CHECK(last.what == "instances 1 -> 2");
    CHECK_FALSE(last.fits);
    CHECK(last.throughput_gain > 0.5);  // twice the instances: the most gain, ranked last
    for (std::size_t i = 0; i + 1 < g.changes.size(); ++i) CHECK(g.changes[i].fits);
    const deployment_gains shared = what_each_change_buys(d, {}, {.copies = weight_copies::shared});
    CHECK(shared.changes.front().what == "instances 1 -> 2");
}

TEST_CASE("perfcast whatif: --shared-weights and --instance-memory, and their errors") {
    perfcast_test::scratch_dir dir("device_memory");
    const std::string path = (dir.path / "big.model").string();
    std::ofstream(path) << big_text;
    const std::vector<std::string_view> base{"--model",  path, "--streams", "1,2", "--cube", "24",
                                             "--vector", "48", "--batch",   "16"};
    const perfcast_test::cli_run plain = whatif(base);
    REQUIRE(plain.status == cli::exit_ok);
    CHECK(has(plain.out, "1 of 2 deployments need more than the card's 64 GiB"));
    std::vector<std::string_view> args = base;
    args.push_back("--shared-weights");
    const perfcast_test::cli_run shared = whatif(args);
    REQUIRE(shared.status == cli::exit_ok);
    CHECK(has(shared.out, "one copy the instances share"));
    CHECK(has(shared.out, "the largest deployment holds at least 47.7 GiB of the card's 64 GiB"));
    args.insert(args.end(), {"--instance-memory", "9GiB"});
    const perfcast_test::cli_run reserved = whatif(args);
    REQUIRE(reserved.status == cli::exit_ok);
    CHECK(has(reserved.out, "9 GiB reserved each"));
    CHECK(has(reserved.out, "1 of 2 deployments need more than the card's 64 GiB"));
    args = base;
    args.insert(args.end(), {"--instance-memory", "9"});
    const perfcast_test::cli_run bad = whatif(args);
    CHECK(bad.status == cli::exit_usage);
    CHECK(has(bad.err, "--instance-memory = '9', expected a size"));
    // Serving mode on a card where nothing fits: the error says why.
    args = {"--model",  path, "--streams", "2",   "--cube",     "24",
            "--vector", "48", "--qps",     "100", "--requests", "2000"};
    const perfcast_test::cli_run none = whatif(args);
    CHECK(none.status == cli::exit_failure);
    CHECK(has(none.err, "configurations that fit the card's memory"));
    // Serving mode with one stream count that fits: the others are left out, and said so.
    args = {"--model", path,  "--streams",  "1,2",  "--cube",      "24", "--vector", "48",
            "--qps",   "100", "--requests", "2000", "--max-batch", "8",  "--format", "json"};
    const perfcast_test::cli_run some = whatif(args);
    REQUIRE(some.status == cli::exit_ok);
    CHECK(perfcast_test::json_number(some.out, "configurations") == 1.0);
    CHECK(perfcast_test::json_number(some.out, "unfit_configurations") == 1.0);
}

}  // namespace test_device_memory
