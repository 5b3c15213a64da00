// io/model_file.hpp: the text model format, its files in tests/data/models, and its errors (each
// with the file, line and column and what was expected).
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/graph.hpp>
#include <perfcast/io/model_file.hpp>
#include <perfcast/scenario.hpp>

#include <string>
#include <string_view>

#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_model_file {

using namespace perfcast;
using perfcast::batch_symbol::B;

namespace {
const std::string models = PERFCAST_SOURCE_DIR "/tests/data/models/";

struct failure {
    std::string what;
    int line = -1;
    int column = -1;
};
failure fail_of(std::string_view text) {
    try {
        (void)io::parse_model(text, "t.model");
    } catch (const io::model_file_error& e) {
        return {e.what(), e.line(), e.column()};
    }
    return {"(no error)"};
}
failure fail_file(const std::string& name) {
    try {
        (void)io::read_model_file(models + name);
    } catch (const io::model_file_error& e) {
        return {e.what(), e.line(), e.column()};
    }
    return {"(no error)"};
}
using perfcast_test::has;
}  // namespace

TEST_CASE("the scenario file reads back as the built-in scenario, node for node") {
    const model m = io::read_model_file(models + "ctr_ranking.model");
    CHECK(m.name == "ctr_ranking");
    REQUIRE(m.nodes.size() == scenario::ctr_ranking.size());
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        INFO("node " << i << " " << scenario::ctr_ranking[i].name.view());
        CHECK(m.nodes[i] == scenario::ctr_ranking[i]);  // the line where it was read aside
        CHECK(scenario::ctr_ranking[i].line.value == 0);
    }
    // Each node's line: the file's (name on line 4, comments and blanks between the ops).
    CHECK(m.nodes.front().line.value == 7);
    CHECK(m.nodes[1].line.value == 8);
    CHECK(m.nodes.back().line.value > m.nodes[m.nodes.size() - 2].line.value);
    CHECK(serial_latency(chips::ascend910b1, m, 64).latency ==
          serial_latency(chips::ascend910b1, scenario::ctr_ranking, 64).latency);
}

TEST_CASE(
    "ctr_ranking_310p.model: the scenario with its hf32 BMMs in fp16, and it runs on a 310P3") {
    const model m = io::read_model_file(models + "ctr_ranking_310p.model");
    CHECK(m.name == "ctr_ranking_310p");
    REQUIRE(m.nodes.size() == scenario::ctr_ranking.size());
    int changed = 0;
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        const node& want = scenario::ctr_ranking[i];
        INFO("node " << i << " " << want.name.view());
        node got = m.nodes[i];
        got.line = want.line;
        if (want.type == dtype::hf32) {
            CHECK(got.type == dtype::fp16);
            got.type = want.type;
            ++changed;
        }
        CHECK(got == want);
    }
    CHECK(changed == 2);
    // The scenario itself does not run on the 310P3 (its cube has no hf32); this one does.
    CHECK_THROWS_AS((void)serial_latency(chips::ascend310p3, scenario::ctr_ranking, 64), error);
    CHECK(serial_latency(chips::ascend310p3, m, 64).latency > duration{});
}

TEST_CASE("host_bound.model: host-launched ops with their own host time") {
    const model m = io::read_model_file(models + "host_bound.model");
    CHECK(m.name == "host_bound");
    REQUIRE(m.nodes.size() == 9);
    CHECK(m.nodes.front().is_transfer());
    CHECK(m.nodes.back().direction == transfer_dir::to_host);
    for (std::size_t i = 1; i + 1 < m.nodes.size(); ++i) {
        CHECK(m.nodes[i].mode == dispatch::host);
        CHECK(m.nodes[i].host_time_set);
        CHECK(m.nodes[i].host_time == duration{40, units::us});
    }
    const serial_result r = serial_latency(chips::ascend910b1, m, 1);
    CHECK(r.share(r.bubbles) > 0.5);
}

TEST_CASE("a runtime key twice on its line, or a second name line, is an error at its place") {
    // Either would silently take the last: refused, as a second runtime line is.
    const failure key = fail_of("runtime acl sync_us=5 sync_us=6\nmatmul B,8;8,8 fp16\n");
    CHECK(key.line == 1);
    CHECK(key.column == 23);
    CHECK(has(key.what, "each key at most once per line"));
    const failure name = fail_of("name x\nname y\nmatmul B,8;8,8 fp16\n");
    CHECK(name.line == 2);
    CHECK(has(name.what, "one name line per file (the model is named 'x')"));
    // Settings alone (no preset) are a runtime line.
    const model m = io::parse_model("runtime sync_us=5\nmatmul B,8;8,8 fp16\n", "t.model");
    REQUIRE(m.runtime);
    CHECK(m.runtime->preset.empty());
    CHECK(m.runtime->settings.size() == 1);
}

TEST_CASE("dimensions: integers, B, B*n, n*B and sums") {
    const model m = io::parse_model(
        "elementwise B,8*B,B*3+2,B+B,7 fp16\n"
        "  # an indented comment\n"
        "\n"
        "cast B fp32 to=fp16   # trailing comment\n",
        "dims.model");
    CHECK(m.name == "dims");  // the file's stem when there is no `name` line
    REQUIRE(m.nodes.size() == 2);
    const batched_shape& s = m.nodes[0].shapes[0];
    REQUIRE(s.rank == 5);
    CHECK(s[0] == B);
    CHECK(s[1] == B * 8);
    CHECK(s[2] == B * 3 + 2);
    CHECK(s[3] == B * 2);
    CHECK(s[4] == batch_dim{7});
    CHECK(m.nodes[1].kind == node_kind::cast);
    CHECK(m.nodes[1].out_type == dtype::fp16);
}

TEST_CASE("keys: dispatch, placement, per-kind options") {
    const model m = io::parse_model(
        "gather B*4;1000,32 fp16 hot=0.3 index=int64 host=1\n"
        "elementwise B,4 int64 aicpu=1 dynamic=1 host_us=12.5\n"
        "bmm B,8,1,32;32,300 fp16 broadcast_b=1 out=fp32\n"
        "topk B,2000 fp32 k=50 valid=200\n"
        "transfer 1,300 int64 fixed=1 dir=out\n"
        "generic B,16 fp16 engine=cube flops=64 in=4 out=2 units=3\n"
        "concat B,8;B,5 fp16 inner=13\n"
        "transpose B,64 fp16 inner_moves=0\n",
        "keys.model");
    REQUIRE(m.nodes.size() == 8);
    CHECK(m.nodes[0].mode == dispatch::host);
    CHECK(m.nodes[0].hot_fraction == 0.3);
    CHECK(m.nodes[0].index_type == dtype::int64);
    CHECK(m.nodes[1].eng == engine::aicpu);
    CHECK(m.nodes[1].mode == dispatch::host_sync);
    CHECK(m.nodes[1].host_time == duration{12.5, units::us});
    CHECK(m.nodes[2].broadcast_b);
    CHECK(instantiate(m.nodes[2], 4) ==
          batch_matmul(32, 1, 300, 32, dtype::fp16, {.broadcast_b = true, .out_type = dtype::fp32}));
    CHECK(m.nodes[3].k == 50);
    CHECK(m.nodes[3].valid == 200);
    CHECK(m.nodes[4].direction == transfer_dir::to_host);
    CHECK_FALSE(m.nodes[4].depends_on_batch());
    CHECK(m.nodes[5].eng == engine::cube);
    CHECK(instantiate(m.nodes[5], 2).work_units == 3);
    CHECK(m.nodes[6].shape_count == 2);
    CHECK(m.nodes[6].inner == 13);
    CHECK_FALSE(m.nodes[7].inner_axis_moves);
}

// ---- errors: each names file:line:column and what was expected ------------------------------------
TEST_CASE("error files: unknown op, bad shape, missing batch dimension, non-numeric field") {
    const failure op = fail_file("bad_unknown_op.model");
    CHECK(op.line == 3);
    CHECK(op.column == 1);
    CHECK(has(op.what, "bad_unknown_op.model:3:1: op = \"lstm\", expected matmul, bmm,"));

    const failure shape = fail_file("bad_shape.model");
    CHECK(shape.line == 2);
    CHECK(shape.column == 15);  // the 'x' of B*x
    CHECK(has(shape.what, "bad_shape.model:2:15: shapes = \"x\", expected a dimension"));

    const failure batch = fail_file("bad_missing_batch.model");
    CHECK(batch.line == 2);
    CHECK(batch.column == 13);
    CHECK(has(batch.what, "expected a dimension with B (the batch), or fixed=1"));

    const failure number = fail_file("bad_number.model");
    CHECK(number.line == 1);
    CHECK(number.column == 33);
    CHECK(has(number.what, "hot = \"lots\", expected a share in [0, 1]"));

    const failure missing = fail_file("no_such.model");
    CHECK(has(missing.what, "no_such.model: cannot open file for reading"));
}

TEST_CASE("inline errors name the place and the expectation") {
    struct expect_case {
        std::string_view text;
        int line;
        int column;
        std::string_view message;
    };
    const expect_case cases[] = {
        {"matmul B,64;32,16 fp16", 1, 8, "B's K (its second-last dimension) equal to A's K"},
        {"topk B,10 fp32", 1, 11, "k=N: how many elements the TopK keeps"},
        {"topk B,10 fp32 k=20", 1, 18, "k = \"20\", expected k <= the length (10)"},
        {"cast B fp32", 1, 8, "to=DTYPE"},
        {"gather B,26;100,32 fp16", 1, 8, "the indices as one dimension"},
        {"gather B;B,32 fp16", 1, 8, "a table shape ROWS,ROW_ELEMENTS without B"},
        {"elementwise B,4 fp16 foo=1", 1, 22, "option = \"foo\", expected a key elementwise takes"},
        {"elementwise B,4 fp16 ops=2 ops=3", 1, 28, "each key at most once"},
        {"elementwise B,4 fp16 inputs=two", 1, 29, "inputs = \"two\", expected an integer"},
        {"elementwise B,4 fp16 host", 1, 22, "option = \"host\", expected key=value"},
        {"elementwise B,4 fp16 host=maybe", 1, 27, "host = \"maybe\", expected 0 or 1"},
        {"elementwise B,4", 1, 16, "a dtype after the shapes"},
        {"elementwise B,4 fp17", 1, 17, "dtype = \"fp17\", expected a dtype"},
        {"elementwise", 1, 12, "shapes after the op kind"},
        {"elementwise B,0 fp16", 1, 15, "with a value >= 1"},
        {"elementwise B;;4 fp16", 1, 15, "shapes separated by ';'"},
        {"elementwise B,1,1,1,1,1,1,1,1 fp16", 1, 29, "at most 8 dimensions"},
        {"tile B,4;2 fp16", 1, 6, "MULTIPLES with one entry per input dimension"},
        {"transfer B int64 dir=sideways", 1, 22, "in (host to device) or out"},
        {"generic B fp16 engine=gpu", 1, 23, "cube, vector or aicpu"},
        {"matmul B,64;64,8 fp16 aicpu=1", 1, 8, "a vector op (not a matmul or a transfer)"},
        {"elementwise B,4 fp16\nelementwise 4,4 fp16", 2, 13, "a dimension with B"},
        {"name a b\nelementwise B fp16", 1, 1, "`name MODEL_NAME` (one word)"},
        {"# only a comment\n", 0, 0, "op lines = 0, expected at least one op line"},
    };
    for (const expect_case& c : cases) {
        INFO(c.text);
        const failure f = fail_of(c.text);
        CHECK(f.line == c.line);
        CHECK(f.column == c.column);
        CHECK(has(f.what, std::string(c.message)));
        CHECK(f.what.rfind("perfcast::model_file: t.model", 0) == 0);
    }
}

TEST_CASE("numeric keys are checked against their ranges where they are read") {
    // Each error names the key's value column, not only the instantiation that would fail later.
    struct expect_case {
        std::string_view text;
        int column;
        std::string_view message;
    };
    const expect_case cases[] = {
        {"elementwise B,4 fp16 ops=0", 26,
         "t.model:1:26: ops = \"0\", expected operations per element in (0, 1e9)"},
        {"elementwise B,4 fp16 ops=1e300", 26, "expected operations per element in (0, 1e9)"},
        {"norm B,4 fp16 ops=-1", 19, "ops = \"-1\", expected operations per element in (0, 1e9)"},
        {"elementwise B,4 fp16 inputs=0", 29,
         "inputs = \"0\", expected an integer in [1, 2147483647]"},
        // Not wrapped to 1 by a cast to int.
        {"elementwise B,4 fp16 inputs=4294967297", 29, "expected an integer in [1, 2147483647]"},
        {"elementwise B,4 fp16 outputs=0", 30, "outputs = \"0\", expected an integer in [1, "},
        {"norm B,4 fp16 inputs=0", 22, "inputs = \"0\", expected an integer in [1, 2147483647]"},
        {"elementwise B,4 fp16 inner=-1", 28, "inner = \"-1\", expected an integer >= 0"},
        {"gather B;100,32 fp16 hot=1.5", 26, "hot = \"1.5\", expected a share in [0, 1]"},
        {"topk B,100 fp16 k=0", 19, "k = \"0\", expected an integer >= 1"},
        {"topk B,100 fp16 k=10 valid=5", 28,
         "valid = \"5\", expected a valid length from k (10) to the length (100), or 0: the whole "
         "length"},
        {"topk B,100 fp16 k=10 valid=200", 28, "from k (10) to the length (100)"},
        {"topk B,100 fp16 k=10 valid=-1", 28, "from k (10) to the length (100)"},
        {"topk 8,B fp16 k=10 valid=5", 26,
         "valid = \"5\", expected a valid length from k (10) to the length, or 0: the whole "
         "length"},
        {"concat B,8;B,5 fp16 inner=-1", 27, "inner = \"-1\", expected an integer >= 0"},
        {"generic B fp16 flops=-1", 22, "flops = \"-1\", expected flops per element in [0, 1e15)"},
        {"generic B fp16 in=1e15", 19,
         "in = \"1e15\", expected bytes read per element in [0, 1e15)"},
        {"generic B fp16 out=-2", 20, "expected bytes written per element in [0, 1e15)"},
        {"generic B fp16 units=0", 22, "units = \"0\", expected an integer >= 1"},
    };
    for (const expect_case& c : cases) {
        INFO(c.text);
        const failure f = fail_of(c.text);
        CHECK(f.line == 1);
        CHECK(f.column == c.column);
        CHECK(has(f.what, std::string(c.message)));
    }
    // valid=0 is the whole length (nodes::topk), as leaving it out.
    const model m = io::parse_model("topk B,100 fp16 k=10 valid=0\ntopk B,100 fp16 k=10\n");
    CHECK(instantiate(m.nodes[0], 4) == instantiate(m.nodes[1], 4));
    CHECK(instantiate(m.nodes[0], 4) == topk(4, 100, 10, dtype::fp16, 100));
    // The node factory refuses k > valid for C++ callers too.
    std::string what;
    try {
        (void)nodes::topk(B, 100, 10, dtype::fp16, 5);
    } catch (const perfcast::error& e) {
        what = e.what();
    }
    CHECK(what ==
          "perfcast::nodes::topk: k = 10, expected k <= valid (5): a TopK keeps k of the valid "
          "elements");
}

TEST_CASE("an error at some batch names the node's line in its model file") {
    // Fine at batch 1 (1e11 x 4096 rows), past int64 at batch 16: found where it is evaluated.
    const model m =
        io::parse_model("name t\n# a comment\n\nmatmul B*100000000000,4096;4096,4096 fp16\n");
    REQUIRE(m.nodes.size() == 1);
    CHECK(m.nodes[0].line.value == 4);
    const chip& c = chips::ascend910b1;
    CHECK_THROWS_WITH_AS((void)evaluate_at(c, m.nodes[0], batch_size{16}, core_count{24}),
                         doctest::Contains("(in node 'matmul', line 4 of its model file, at "
                                           "batch 16)"),
                         perfcast::error);
    // A node built in code has no line.
    node code = m.nodes[0];
    code.line = node::source_line{};
    CHECK_THROWS_WITH_AS((void)evaluate_at(c, code, batch_size{16}, core_count{24}),
                         doctest::Contains("(in node 'matmul' at batch 16)"), perfcast::error);
}

TEST_CASE("broadcast: what fails at every batch is refused where it is read, the rest per batch") {
    // Two sizes without B that differ (the input's not 1), or an input of higher rank: no batch
    // helps, so the line's place is named.
    const failure fixed = fail_of("broadcast 2,300;3,B fp32");
    CHECK(fixed.column == 11);
    CHECK(has(fixed.what,
              "t.model:1:11: op = \"broadcast\", expected valid arguments "
              "(perfcast::nodes::broadcast: input dimension 0 = 2, expected 1 or the output's 3 "
              "(input [2, 300] to output [3, B]))"));
    const failure rank = fail_of("broadcast 1,2,B;B fp32");
    CHECK(rank.column == 11);
    CHECK(has(rank.what,
              "input rank = 3, expected at most the output's rank, 1 (input [1, 2, B] "
              "to output [B])"));
    // 2 broadcasts to B at B = 2 only: checked at each batch, naming the node, its shapes as
    // written and the batch.
    const model m = io::parse_model(
        "broadcast 2,300;B*2+1,300 fp32 name=bias\n"
        "broadcast 1,300;B,300 fp32\n"
        "broadcast B,1;B,300 fp32\n");
    REQUIRE(m.nodes.size() == 3);
    std::string what;
    try {
        (void)instantiate(m.nodes[0], 2);
    } catch (const perfcast::error& e) {
        what = e.what();
    }
    CHECK(what ==
          "perfcast::instantiate: broadcast input dimension 0 = 2, expected 1 or the output's 5 "
          "(node 'bias', line 1 of its model file: input [2, 300] to output [B*2+1, 300] at "
          "batch 2)");
    // Evaluated, the message is not named twice: it names the node and batch already.
    std::string evaluated;
    try {
        (void)evaluate_at(chips::ascend910b1, m.nodes[0], batch_size{2}, core_count{1});
    } catch (const perfcast::error& e) {
        evaluated = e.what();
    }
    CHECK(evaluated == what);
    CHECK(instantiate(m.nodes[1], 7) == broadcast(shape{1, 300}, shape{7, 300}, dtype::fp32));
    CHECK(instantiate(m.nodes[2], 7) == broadcast(shape{7, 1}, shape{7, 300}, dtype::fp32));
    // B on the input's side: B+1 broadcasts to 2 at batch 1.
    const model at_one = io::parse_model("broadcast B+1,300;2,300 fp32\n");
    CHECK(instantiate(at_one.nodes[0], 1).bytes_read ==
          broadcast(shape{2, 300}, shape{2, 300}, dtype::fp32).bytes_read);
}

TEST_CASE("runtime line: a preset and settings, checked where they are written") {
    const model m = io::parse_model("transfer B,26 int64\n"
                                    "runtime acl copies=aggregated memory=pinned buffer_us=12\n"
                                    "elementwise B,64 fp16\n",
                                    "t.model");
    REQUIRE(m.runtime);
    CHECK(m.runtime->preset == "acl");
    REQUIRE(m.runtime->settings.size() == 3);
    CHECK(m.runtime->settings[0].key == "copies");
    CHECK(m.runtime->settings[0].value == "aggregated");
    CHECK(m.runtime->settings[2].origin == "t.model:2:45");
    runtime_path r = runtime_presets::acl;
    apply_runtime_settings(r, m.runtime->settings);
    CHECK(r.copies == copy_policy::aggregated);
    CHECK(r.memory == host_memory::pinned);
    CHECK(r.buffer == duration{12.0, units::us});
    CHECK(m.nodes.size() == 2);  // the runtime line is not an op

    const model bare = io::parse_model("runtime launch=per-op\nelementwise B,64 fp16\n");
    REQUIRE(bare.runtime);
    CHECK(bare.runtime->preset.empty());
    CHECK(!io::parse_model("elementwise B,64 fp16\n").runtime);

    failure f = fail_of("runtime acl copies=all\nelementwise B,64 fp16\n");
    CHECK(f.line == 1);
    CHECK(f.column == 13);
    CHECK(has(f.what, "copies = all, expected per-tensor or aggregated"));
    f = fail_of("runtime tensorrt\nelementwise B,64 fp16\n");
    CHECK(f.column == 9);
    CHECK(has(f.what, "expected none, acl or cuda, or key=value settings"));
    f = fail_of("runtime sync_us=-1\nelementwise B,64 fp16\n");
    CHECK(has(f.what, "sync_us = -1, expected a time in [0, 6e7] us"));
    f = fail_of("runtime colour=blue\nelementwise B,64 fp16\n");
    CHECK(has(f.what, "expected one of copies, memory"));
    f = fail_of("runtime acl\nruntime cuda\nelementwise B,64 fp16\n");
    CHECK(f.line == 2);
    CHECK(has(f.what, "one runtime line per file"));
    f = fail_of("runtime =3\nelementwise B,64 fp16\n");
    CHECK(has(f.what, "expected key=value"));
}

TEST_CASE("concat takes any number of inputs; past 8 they are summed exactly") {
    // 40 embedding outputs of [B, 8] and one dense [B, 13]: elements 40 x 8 B + 13 B.
    std::string shapes;
    for (int i = 0; i < 40; ++i) shapes += "B,8;";
    shapes += "B,13";
    const model m = io::parse_model("concat " + shapes + " fp16\n");
    REQUIRE(m.nodes.size() == 1);
    const node& n = m.nodes[0];
    CHECK(n.shape_count == node::max_shapes);
    for (std::int64_t b : {1, 7, 64}) {
        const op o = instantiate(n, b);
        CHECK(o.bytes_read == data_size{static_cast<double>((40 * 8 + 13) * b * 2), units::B});
    }
    // The same concat written with 8 or fewer inputs costs the same.
    const model few = io::parse_model("concat B,160;B,160;B,13 fp16 inner=8\n");
    const model many = io::parse_model("concat " + shapes + " fp16 inner=8\n");
    CHECK(instantiate(few.nodes[0], 16) == instantiate(many.nodes[0], 16));
    // Inputs past the 8th with two batch dimensions cannot be summed as a x B + c.
    std::string two;
    for (int i = 0; i < 8; ++i) two += "B,8;";
    two += "B,B";
    const failure f = fail_of("concat " + two + " fp16\n");
    CHECK(has(f.what, "at most one dimension with B each (input 9 has more)"));
    std::string toomany;
    for (int i = 0; i < 4097; ++i) toomany += "4;";
    CHECK(has(fail_of("concat " + toomany + "4 fp16 fixed=1\n").what, "at most 4096 shapes"));
}

}  // namespace test_model_file
