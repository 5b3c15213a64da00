// The `perfcast` command's pieces: the io writers (table, CSV, JSON), the argument parser, the
// dispatch table's exit codes, and `perfcast chips` in its three formats.
#include <doctest/doctest.h>

#include <perfcast/chips.hpp>
#include <perfcast/io/csv.hpp>
#include <perfcast/io/json.hpp>
#include <perfcast/io/table.hpp>

#include <array>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../examples/perfcast/cli.hpp"
#include "../examples/perfcast/commands.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_cli_chips {

namespace {

using namespace perfcast;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) out.push_back(line);
    return out;
}

struct run_result {
    int status;
    std::string out;
    std::string err;
};

constexpr cli::command test_commands[] = {cli::chips_command};

run_result run(std::initializer_list<std::string_view> args) {
    std::ostringstream out;
    std::ostringstream err;
    const std::vector<std::string_view> v(args);
    const int status = cli::dispatch(v, test_commands, out, err);
    return {status, out.str(), err.str()};
}

}  // namespace

TEST_CASE("io: format_fixed and looks_numeric") {
    CHECK(io::format_fixed(363.7248, 1) == "363.7");
    CHECK(io::format_fixed(1600.0, 0) == "1600");
    CHECK(io::format_fixed(-0.04, 1) == "0.0");
    CHECK(io::format_fixed(std::numeric_limits<double>::quiet_NaN(), 2) == "NaN");
    CHECK(io::format_shortest(0.1) == "0.1");
    CHECK(io::format_significant(18.427263317153265, 4) == "18.43");
    CHECK(io::format_significant(1.074232003092517, 4) == "1.074");
    CHECK(io::format_significant(25000000.0, 3) == "2.5e+07");
    CHECK(io::format_significant(std::numeric_limits<double>::infinity(), 3) == "inf");
    CHECK(io::looks_numeric("12"));
    CHECK(io::looks_numeric("-1.5e+09"));
    CHECK(io::looks_numeric(".5"));
    CHECK_FALSE(io::looks_numeric("Gen5 x16"));
    CHECK_FALSE(io::looks_numeric("-"));
    CHECK_FALSE(io::looks_numeric("1e"));
    CHECK_FALSE(io::looks_numeric(""));
}

TEST_CASE("io: text_table aligns columns, numbers to the right") {
    io::text_table t({"name", "value", "note"});
    t.add_row({"a", "1.5", "x"});
    t.add_row({"longer", "100", ""});
    const auto l = lines_of(t.str());
    REQUIRE(l.size() == 4);
    CHECK(l[0] == "name    value  note");
    CHECK(l[1] == "------  -----  ----");
    CHECK(l[2] == "a         1.5  x");
    CHECK(l[3] == "longer    100");  // no trailing spaces
    CHECK_THROWS_AS(t.add_row({"too", "few"}), perfcast::error);

    io::text_table u({"µs", "n"});  // width counts code points, not bytes
    u.add_row({"ab", "7"});
    u.set_align(1, io::align::left);
    const auto m = lines_of(u.str());
    CHECK(m[0] == "µs  n");
    CHECK(m[2] == "ab  7");
}

TEST_CASE("io: CSV quoting follows RFC 4180") {
    CHECK(io::csv_field("plain") == "plain");
    CHECK(io::csv_field("a,b") == "\"a,b\"");
    CHECK(io::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(io::csv_field("two\nlines") == "\"two\nlines\"");
    CHECK(io::csv_field("cr\r") == "\"cr\r\"");
    CHECK(io::csv_field(" padded") == "\" padded\"");
    CHECK(io::csv_field("") == "");
    CHECK(io::csv_field("a;b", ';') == "\"a;b\"");
    std::ostringstream os;
    io::csv_writer w(os);
    w.row({"x", "1,5", "q\""});
    const std::vector<std::string> fields{"y", "2"};
    w.row(fields);
    CHECK(os.str() == "x,\"1,5\",\"q\"\"\"\ny,2\n");
    std::ostringstream strict;
    io::csv_writer s(strict, ',', "\r\n");
    s.row({"a", "b"});
    CHECK(strict.str() == "a,b\r\n");
}

TEST_CASE("io: JSON writer") {
    SUBCASE("compact, with escaping and numbers") {
        std::ostringstream os;
        io::json_writer j(os, 0);
        j.begin_object()
            .member("s", "a\"b\\c\n\t\x01")
            .member("i", 20)
            .member("u", 7U)
            .member("d", 294.912)
            .member("big", 1e20)
            .member("nan", std::numeric_limits<double>::quiet_NaN())
            .member("inf", -std::numeric_limits<double>::infinity())
            .member("t", true);
        j.key("a").begin_array().value(1).value("x").null().end_array();
        j.key("e").begin_object().end_object();
        j.key("ea").begin_array().end_array();
        j.end_object();
        CHECK(j.done());
        CHECK(os.str() ==
              "{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\",\"i\":20,\"u\":7,\"d\":294.912,"
              "\"big\":1e+20,\"nan\":null,\"inf\":null,\"t\":true,\"a\":[1,\"x\",null],"
              "\"e\":{},\"ea\":[]}");
    }
    SUBCASE("indented") {
        std::ostringstream os;
        io::json_writer j(os);
        j.begin_array().begin_object().member("k", 1).end_object().end_array();
        CHECK(os.str() == "[\n  {\n    \"k\": 1\n  }\n]\n");
    }
    SUBCASE("misuse throws") {
        std::ostringstream os;
        io::json_writer j(os);
        j.begin_object();
        CHECK_THROWS_AS(j.value(1), perfcast::error);  // no key
        j.key("k");
        CHECK_THROWS_AS(j.key("again"), perfcast::error);
        CHECK_THROWS_AS(j.end_object(), perfcast::error);  // key without value
        j.value(2);
        CHECK_THROWS_AS(j.end_array(), perfcast::error);
        j.end_object();
        CHECK(j.done());
        CHECK_THROWS_AS(j.value(3), perfcast::error);  // second root
        io::json_writer k(os);
        k.begin_array();
        CHECK_THROWS_AS(k.key("k"), perfcast::error);  // key in an array
        CHECK_FALSE(k.done());
    }
}

TEST_CASE("cli: argument parser") {
    constexpr std::array<cli::option, 2> opts{{
        {"format", "FORMAT", "output format"},
        {"verbose", "", "more output"},
    }};
    SUBCASE("--name value, --name=value, switches, positional") {
        const std::array<std::string_view, 5> args{"in.csv", "--verbose", "-3", "--format=json",
                                                   "--verbose"};
        const auto a = cli::parse_args(args, opts);
        CHECK(a.value_or("format", "table") == "json");
        CHECK(a.has("verbose"));  // a switch given twice is the same switch
        CHECK_FALSE(a.has("help"));
        REQUIRE(a.positional.size() == 2);
        CHECK(a.positional[0] == "in.csv");
        CHECK(a.positional[1] == "-3");  // a negative number is positional
    }
    SUBCASE("a flag with a value given twice is an error, not the last one silently") {
        const std::array<std::string_view, 4> args{"--format", "csv", "--format=json", "x"};
        try {
            (void)cli::parse_args(args, opts);
            FAIL("no error");
        } catch (const cli::usage_error& e) {
            CHECK(std::string(e.what()) ==
                  "option '--format' given twice ('csv' and 'json'): give it once");
        }
        constexpr std::array<cli::option, 1> lists{{{"batch", "LIST", "batch sizes"}}};
        const std::array<std::string_view, 4> twice{"--batch", "16", "--batch", "32"};
        try {
            (void)cli::parse_args(twice, lists);
            FAIL("no error");
        } catch (const cli::usage_error& e) {
            CHECK(std::string(e.what()) ==
                  "option '--batch' given twice ('16' and '32'): give it once (a list: '16,32')");
        }
        // A value with parts (one GEMM's M,N,K) is not a list: joining two would be refused.
        constexpr std::array<cli::option, 2> parts{
            {{"matmul", "M,N,K", "one GEMM"}, {"qps", "X[,Y..]", "loads"}}};
        const std::array<std::string_view, 4> two_gemms{"--matmul", "1,1,1", "--matmul", "2,2,2"};
        try {
            (void)cli::parse_args(two_gemms, parts);
            FAIL("no error");
        } catch (const cli::usage_error& e) {
            CHECK(std::string(e.what()) ==
                  "option '--matmul' given twice ('1,1,1' and '2,2,2'): give it once");
        }
        const std::array<std::string_view, 4> two_loads{"--qps", "100", "--qps", "200"};
        try {
            (void)cli::parse_args(two_loads, parts);
            FAIL("no error");
        } catch (const cli::usage_error& e) {
            CHECK(std::string(e.what()) ==
                  "option '--qps' given twice ('100' and '200'): give it once (a list: '100,200')");
        }
    }
    SUBCASE("-- ends the flags; --help and -h are always known") {
        const std::array<std::string_view, 3> args{"--help", "--", "--format"};
        const auto a = cli::parse_args(args, opts);
        CHECK(a.has("help"));
        REQUIRE(a.positional.size() == 1);
        CHECK(a.positional[0] == "--format");
        const std::array<std::string_view, 1> h{"-h"};
        CHECK(cli::parse_args(h, opts).has("help"));
    }
    SUBCASE("errors") {
        const std::array<std::string_view, 1> unknown{"--colour"};
        CHECK_THROWS_WITH_AS((void)cli::parse_args(unknown, opts), "unknown option '--colour'",
                             cli::usage_error);
        const std::array<std::string_view, 1> near{"--fromat"};  // two letters swapped
        CHECK_THROWS_WITH_AS((void)cli::parse_args(near, opts),
                             "unknown option '--fromat' (did you mean '--format'?)",
                             cli::usage_error);
        const std::array<std::string_view, 1> prefix{"--verb"};  // a prefix of one option
        CHECK_THROWS_WITH_AS((void)cli::parse_args(prefix, opts),
                             "unknown option '--verb' (did you mean '--verbose'?)",
                             cli::usage_error);
        const std::array<std::string_view, 1> one_dash{"-format"};  // a dash too few
        CHECK_THROWS_WITH_AS((void)cli::parse_args(one_dash, opts),
                             "unknown option '-format' (did you mean '--format'?)",
                             cli::usage_error);
        const std::array<std::string_view, 1> missing{"--format"};
        CHECK_THROWS_AS((void)cli::parse_args(missing, opts), cli::usage_error);
        const std::array<std::string_view, 1> switch_value{"--verbose=1"};
        CHECK_THROWS_AS((void)cli::parse_args(switch_value, opts), cli::usage_error);
        const std::array<std::string_view, 1> short_flag{"-x"};
        CHECK_THROWS_AS((void)cli::parse_args(short_flag, opts), cli::usage_error);
        const std::array<std::string_view, 1> bad_choice{"--format=xml"};
        const auto a = cli::parse_args(bad_choice, opts);
        CHECK_THROWS_AS((void)cli::choice(a, "format", {"table", "csv"}, "table"),
                        cli::usage_error);
    }
}

TEST_CASE("cli: the nearest name suggested for a mistyped one") {
    // Known answers: kitten -> sitting is the textbook 3; a swap of neighbours counts 1 (optimal
    // string alignment), case is ignored, and an empty word is as far as the other's length.
    CHECK(cli::edit_distance("kitten", "sitting") == 3);
    CHECK(cli::edit_distance("fromat", "format") == 1);
    CHECK(cli::edit_distance("CHIP", "chip") == 0);
    CHECK(cli::edit_distance("", "seed") == 4);
    CHECK(cli::edit_distance("seed", "") == 4);
    CHECK(cli::edit_distance("ca", "abc") == 3);  // OSA (not Damerau): no edit after a swap
    constexpr std::array<std::string_view, 4> names{"validate", "calibrate", "chips", "card"};
    CHECK(cli::suggestion("valdate", names) == " (did you mean 'validate'?)");
    CHECK(cli::suggestion("calibarte", names) == " (did you mean 'calibrate'?)");
    CHECK(cli::suggestion("chps", names, "--") == " (did you mean '--chips'?)");
    CHECK(cli::suggestion("cars", names) == " (did you mean 'card'?)");
    // Ties go to the first listed; too far from every name (more than a third of the typed
    // word's length, at least 1 edit) suggests nothing rather than a guess.
    constexpr std::array<std::string_view, 2> two{"cat", "car"};
    CHECK(cli::suggestion("caz", two) == " (did you mean 'cat'?)");
    // A prefix of one name, case ignored, names it though it is far in edits.
    CHECK(cli::suggestion("VALI", names) == " (did you mean 'validate'?)");
    CHECK(cli::suggestion("ca", names).empty());  // a prefix of two names: no guess
    CHECK(cli::suggestion("frobnicate", names).empty());
    CHECK(cli::suggestion("xy", names).empty());
    CHECK(cli::suggestion("", names).empty());
    // The options renamed since 0.1 are found from their old names.
    constexpr std::array<std::string_view, 3> options{"hbm-mix-cost", "l2-efficiency", "chip"};
    CHECK(cli::suggestion("hbm-write-cost", options, "--") == " (did you mean '--hbm-mix-cost'?)");
}

TEST_CASE("cli: names_a_flag: a library error about a flag's value is a usage error") {
    CHECK(cli::names_a_flag("perfcast::parse: --transfer = '2PiB', expected a size"));
    CHECK(cli::names_a_flag("perfcast::whatif: --cube = 25, expected at most 24"));
    CHECK(cli::names_a_flag("option '--runtime-set': perfcast::validate(runtime_path): ..."));
    CHECK_FALSE(cli::names_a_flag("perfcast::matmul: m = 0, expected a dimension >= 1"));
    CHECK_FALSE(cli::names_a_flag("perfcast::read_params: p.txt:3: x = --y, expected a number"));
    CHECK_FALSE(cli::names_a_flag("perfcast::parse: --a b = 1, expected"));  // not one token
    CHECK_FALSE(cli::names_a_flag("perfcast::parse: --top"));
    CHECK_FALSE(cli::names_a_flag("error: --x = 1"));
}

TEST_CASE("cli: synopsis: the usage lines, a later mode's with its continuation, no more") {
    const std::string usage =
        "Usage: perfcast x [--a]\n       perfcast x FILE\n\nWhat x does.\n\n"
        "Other mode: perfcast x --b\n   [--c]\nMore prose.\n  --a  help of a\n";
    CHECK(cli::synopsis("x", usage) ==
          "Usage: perfcast x [--a]\n       perfcast x FILE\nOther mode: perfcast x --b\n   [--c]\n"
          "'perfcast x --help' lists every option.\n");
}

TEST_CASE("cli: dispatch exit codes") {
    const auto none = run({});
    CHECK(none.status == cli::exit_usage);
    CHECK(none.err.find("Usage: perfcast") != std::string::npos);
    const auto help = run({"--help"});
    CHECK(help.status == cli::exit_ok);
    CHECK(help.out.find("chips") != std::string::npos);
    const auto unknown = run({"frobnicate"});
    CHECK(unknown.status == cli::exit_usage);
    CHECK(unknown.err.find("unknown command 'frobnicate'\n") != std::string::npos);
    CHECK(unknown.out.empty());
    CHECK(run({"--verison"}).err.find("(did you mean '--version'?)") != std::string::npos);
    const auto typo = run({"chisp"});
    CHECK(typo.status == cli::exit_usage);
    CHECK(typo.err.find("unknown command 'chisp' (did you mean 'chips'?)") != std::string::npos);
    const auto bad_flag = run({"chips", "--bogus"});
    CHECK(bad_flag.status == cli::exit_usage);
    CHECK(bad_flag.err.find("unknown option '--bogus'\n") != std::string::npos);
    const auto near_flag = run({"chips", "--fromat", "csv"});
    CHECK(near_flag.status == cli::exit_usage);
    CHECK(near_flag.err.find("unknown option '--fromat' (did you mean '--format'?)") !=
          std::string::npos);
    CHECK(bad_flag.err.find("Usage: perfcast chips") != std::string::npos);
    // The synopsis, not the whole help: the error stays on the screen.
    CHECK(bad_flag.err.find("'perfcast chips --help' lists every option.") != std::string::npos);
    CHECK(bad_flag.err.find("show this help") == std::string::npos);
    CHECK(bad_flag.out.empty());
    const auto bad_format = run({"chips", "--format", "xml"});
    CHECK(bad_format.status == cli::exit_usage);
    const auto extra = run({"chips", "extra"});
    CHECK(extra.status == cli::exit_usage);
    const auto chips_help = run({"chips", "--help"});
    CHECK(chips_help.status == cli::exit_ok);
    CHECK(chips_help.out.find("--format") != std::string::npos);
}

TEST_CASE("cli: perfcast chips lists every preset") {
    SUBCASE("table") {
        const auto r = run({"chips"});
        REQUIRE(r.status == cli::exit_ok);
        CHECK(r.err.empty());
        const auto l = lines_of(r.out);
        REQUIRE(l.size() == 2 + chips::all_presets().size());
        CHECK(l[0].starts_with("chip "));
        CHECK(l[0].find("fp16 TFLOP/s") != std::string::npos);
        CHECK(l[0].find("PCIe") != std::string::npos);
        // 910B1: 24 / 48 cores, 1850 MHz, 363.7 TFLOP/s fp16, 727.4 TOP/s int8, Gen5 x16.
        CHECK(l[2].starts_with("ascend910b1 "));
        for (std::string_view cell : {" 24 ", " 48 ", " 1850 ", " 363.7 ", " 727.4 ", " 64.0 ",
                                      " 1600.0 ", " 192 ", " 32 ", "Gen5 x16"}) {
            CAPTURE(cell);
            CHECK(l[2].find(cell) != std::string::npos);
        }
        // fp8: "-" where the cube has no FP8 path, the datasheet's 1978.9 on the Hopper presets.
        CHECK(l[0].find("int8 TOP/s  fp8 TFLOP/s") != std::string::npos);
        CHECK(l[2].find(" 727.4            -  ") != std::string::npos);
        bool hopper = false;
        for (const std::string& line : l) {
            if (!line.starts_with("h100-sxm ")) continue;
            hopper = true;
            CHECK(line.find(" 1978.9       1978.9  ") != std::string::npos);
        }
        CHECK(hopper);
    }
    SUBCASE("csv") {
        const auto r = run({"chips", "--format=csv"});
        REQUIRE(r.status == cli::exit_ok);
        const auto l = lines_of(r.out);
        REQUIRE(l.size() == 1 + chips::all_presets().size());
        CHECK(l[0] ==
              "name,cube_cores,vector_cores,clock_mhz,fp16_tflops,int8_tops,fp8_tflops,hbm_gib,"
              "hbm_gbps,l2_mib,ub_kib,alignment_b,pcie_gen,pcie_lanes,source");
        // An empty fp8 cell: no FP8 path.
        CHECK(l[3].starts_with("ascend910b3,20,40,1800,294.912,589.824,,64,1600,192,192,32,5,16,"));
    }
    SUBCASE("json") {
        const auto r = run({"chips", "--format", "json"});
        REQUIRE(r.status == cli::exit_ok);
        CHECK(r.out.front() == '[');
        CHECK(r.out.find("\"name\": \"h100-sxm\"") != std::string::npos);
        CHECK(r.out.find("\"cube_cores\": 132") != std::string::npos);
        CHECK(r.out.find("\"pcie_gen\": 4") != std::string::npos);
        CHECK(r.out.find("\"fp8_tflops\": null") != std::string::npos);
        CHECK(r.out.find("\"fp8_tflops\": 1978.") != std::string::npos);
        std::size_t objects = 0;
        for (std::size_t p = r.out.find("\"name\""); p != std::string::npos;
             p = r.out.find("\"name\"", p + 1)) {
            ++objects;
        }
        CHECK(objects == chips::all_presets().size());
    }
}

}  // namespace test_cli_chips
