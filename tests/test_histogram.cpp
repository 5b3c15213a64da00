// io/histogram.hpp: bs,count histograms and request traces from CSV; malformed, truncated and
// hostile input gives errors with source, line, column, field and value.
#include <doctest/doctest.h>

#include <perfcast/io/histogram.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_histogram {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast;
using namespace perfcast::literals;

namespace {

parse_error hist_error(const std::string& text) {
    try {
        (void)io::parse_bs_histogram(text, "h.csv");
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error for: ", text);
    return parse_error("x", "", 0, 0, "", "");
}

parse_error trace_error(const std::string& text) {
    try {
        (void)io::parse_trace(text, "t.csv");
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error for: ", text);
    return parse_error("x", "", 0, 0, "", "");
}

using perfcast_test::has;

}  // namespace

TEST_CASE("histogram: the seed file, comments, column order, quotes, BOM, CRLF, CR") {
    const batch_distribution seed =
        io::read_bs_histogram_file(PERFCAST_SOURCE_DIR "/tests/data/bs_hist_seed.csv");
    CHECK(seed.bins().size() == 41);
    CHECK(seed.total() == 10000);

    const batch_distribution want{{1, 5}, {4, 3}, {16, 2}};
    CHECK(io::parse_bs_histogram("bs,count\n1,5\n4,3\n16,2\n") == want);
    CHECK(io::parse_bs_histogram("bs,count\n1,5\n4,3\n16,2") == want);  // no final line end
    CHECK(io::parse_bs_histogram("bs,count\r\n1,5\r\n4,3\r\n16,2\r\n") == want);
    CHECK(io::parse_bs_histogram("bs,count\r1,5\r4,3\r16,2\r") == want);  // old Mac line ends
    CHECK(io::parse_bs_histogram("\xEF\xBB\xBF" "bs,count\n1,5\n4,3\n16,2\n") == want);
    CHECK(io::parse_bs_histogram("# shares\n\nCount , BS\n5,1\n  \n3 , 4\n# \"x, y\n2,16\n") ==
          want);
    CHECK(io::parse_bs_histogram("note,bs,count\n\"a, b\",\"1\",5\n\"\"\"q\"\"\",4,3\nz,16,2\n") ==
          want);
    CHECK(io::parse_bs_histogram("batch_size,share\n1,0.5\n4,0.3\n16,0.2\n").share(0) ==
          doctest::Approx(0.5).epsilon(1e-12));
    CHECK(io::parse_bs_histogram("bs,count\n1,2.5e3\n").total() == 2500);
    // Rows in any order come out sorted.
    CHECK(io::parse_bs_histogram("bs,count\n16,2\n1,5\n4,3\n") == want);
}

TEST_CASE("histogram: bad values name the line, column, field and value") {
    parse_error e = hist_error("bs,count\n1,5\n4,-3\n");
    CHECK(e.line() == 3);
    CHECK(e.column() == 3);
    CHECK(e.text() == "-3");
    CHECK(std::string(e.what()) ==
          "perfcast::read_bs_histogram: h.csv:3:3: count must be > 0 (a bin with no requests is "
          "left out): \"-3\"");
    e = hist_error("bs,count\n1,0\n");
    CHECK(has(e.what(), "h.csv:2:3: count must be > 0"));
    e = hist_error("bs,count\n2.5,4\n");
    CHECK(std::string(e.what()) ==
          "perfcast::read_bs_histogram: h.csv:2:1: bs is invalid, expected a whole number of "
          "samples in 1..1048576: \"2.5\"");
    CHECK(has(hist_error("bs,count\n0,4\n").what(), "h.csv:2:1: bs is invalid"));
    CHECK(has(hist_error("bs,count\n-4,4\n").what(), "\"-4\""));
    CHECK(has(hist_error("bs,count\n99999999999999999999999,4\n").what(), "2:1: bs is invalid"));
    CHECK(has(hist_error("bs,count\n2000000,4\n").what(), "\"2000000\""));  // above 2^20
    CHECK(has(hist_error("bs,count\n4,1e400\n").what(), "2:3: count is invalid"));
    CHECK(has(hist_error("bs,count\n4,nan\n").what(), "count is invalid"));
    CHECK(has(hist_error("bs,count\n4,inf\n").what(), "count is invalid"));
    CHECK(has(hist_error("bs,count\n4,0x10\n").what(), "count is invalid"));
    CHECK(has(hist_error("bs,count\n1,1e308\n2,1e308\n").what(),
              "h.csv:3:3: total count overflows a double"));
    e = hist_error("bs,count\n4,1\n8,1\n4,2\n");
    CHECK(std::string(e.what()) ==
          "perfcast::read_bs_histogram: h.csv:4:1: bs listed twice (first on line 2): \"4\"");
}

TEST_CASE("histogram: empty, missing columns, truncated rows, zero total") {
    CHECK(std::string(hist_error("").what()) ==
          "perfcast::read_bs_histogram: h.csv: empty input: expected a header line naming the "
          "columns bs,count: \"\"");
    CHECK(has(hist_error("\n\n# only comments\n").what(), "empty input"));
    CHECK(std::string(hist_error("bs,cnt\n1,2\n").what()) ==
          "perfcast::read_bs_histogram: h.csv:1: missing column count; the header (the first "
          "line that is not a comment) has the columns: \"bs, cnt\"");
    CHECK(has(hist_error("1,100\n2,50\n").what(), "missing column bs"));  // no header line
    CHECK(std::string(hist_error("bs,count\n").what()) ==
          "perfcast::read_bs_histogram: h.csv: zero total: no bs,count rows after the header: "
          "\"\"");
    const parse_error e = hist_error("bs,count\n1,5\n16,");  // truncated mid-row
    CHECK(e.line() == 3);
    CHECK(has(e.what(), "count is empty"));
    CHECK(has(hist_error("bs,count\n1,5\n16\n").what(),
              "h.csv:3: 1 fields where the header has 2"));
    CHECK(has(hist_error("bs,count\n1,5,7\n").what(), "3 fields where the header has 2"));
    CHECK(has(hist_error("bs,count\n\"1,5\n").what(), "h.csv:2:1: unterminated quoted field"));
    CHECK(has(hist_error("bs,count\n\"1\"x,5\n").what(), "h.csv:2:4: bytes after a closing quote"));
}

TEST_CASE("histogram: hostile bytes are reported escaped, long lines are refused") {
    // Invalid UTF-8 (a lone continuation byte, an overlong NUL) in a value and in the header.
    parse_error e = hist_error("bs,count\n\x80\xC0\x80,5\n");
    CHECK(e.text() == "\x80\xC0\x80");
    CHECK(has(e.what(), "\"\\x80\\xC0\\x80\""));
    e = hist_error("b\xFFs,count\n1,5\n");
    CHECK(has(e.what(), "\"b\\xFFs, count\""));
    e = hist_error(std::string("bs,count\n1\0,5\n", 14));  // a NUL byte
    CHECK(has(e.what(), "\\x00"));
    // A 2 MiB line without a line end: refused at 1 MiB, without reading the rest into memory.
    e = hist_error("bs,count\n" + std::string(2u << 20, '7'));
    CHECK(has(e.what(), "line longer than 1048576 bytes"));
    CHECK(e.line() == 2);
}

TEST_CASE("histogram and trace: streams and memory agree across read-buffer boundaries") {
    // Over 64 KiB (the stream buffer) so that rows straddle reads.
    std::string hist = "bs,count\r\n";
    std::string trace = "time_ms,bs\n";
    for (int i = 1; i <= 9000; ++i) {
        hist += std::to_string(i) + "," + std::to_string(1 + i % 7) + "\r\n";
        trace += std::to_string(i) + ".25," + std::to_string(1 + i % 40) + "\n";
    }
    REQUIRE(hist.size() > 65536);
    REQUIRE(trace.size() > 65536);
    std::istringstream hs(hist);
    CHECK(io::read_bs_histogram(hs, "hs") == io::parse_bs_histogram(hist));
    std::istringstream ts(trace);
    const std::vector<arrival> a = io::read_trace(ts, "ts");
    CHECK(a == io::parse_trace(trace));
    REQUIRE(a.size() == 9000);
    CHECK(a.front().time == duration{});  // relative to the first row
    CHECK(approx_equal(a.back().time, 8999_ms, 1e-12));
}

TEST_CASE("trace: units, relative times, column order, extra columns") {
    const std::vector<arrival> want{{0_ms, 4}, {1.5_ms, 20}, {1.5_ms, 1}};
    const auto same = [&](const std::vector<arrival>& got) {
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i].bs == want[i].bs);
            CHECK(approx_equal(got[i].time, want[i].time, 1e-9));  // 1e-9: epoch seconds
        }
    };
    same(io::parse_trace("time_ms,bs\n0,4\n1.5,20\n1.5,1\n"));
    same(io::parse_trace("bs,time_us,user\n4,100,a\n20,1600,b\n1,1600,c\n"));
    same(io::parse_trace("t_s,batch_size\n1000.0,4\n1000.0015,20\n1000.0015,1\n"));
    same(io::parse_trace("TIMESTAMP_NS , BS\n5000000,4\n6500000,20\n6500000,1\n"));
    // Epoch timestamps in microseconds keep their sub-millisecond gaps.
    const std::vector<arrival> epoch =
        io::parse_trace("time_us,bs\n1736413971558972,4\n1736413971560472,20\n");
    CHECK(epoch[1].time == 1.5_ms);
}

TEST_CASE("trace: out of order, missing columns, bad values, empty") {
    parse_error e = trace_error("time_ms,bs\n0,1\n5,1\n3,1\n");
    CHECK(std::string(e.what()) ==
          "perfcast::read_trace: t.csv:4:1: time_ms is earlier than the row before (5 on line "
          "3): rows must be in time order: \"3\"");
    CHECK(e.line() == 4);
    // Finite times whose difference is not (the fuzzer's kind of input), and a span of more
    // than 1e9 s: refused at the row, not an infinite arrival time.
    CHECK(std::string(trace_error("time_s,bs\n-1e308,1\n1e308,1\n").what()) ==
          "perfcast::read_trace: t.csv:3:1: time_s is more than 1e9 s (31 years) after the first "
          "row's: a trace spans less: \"1e308\"");
    CHECK(io::parse_trace("time_s,bs\n0,1\n1e9,1\n")[1].time == duration{1e9, units::s});
    CHECK(trace_error("time_ms,bs\n0,1\n1.0001e12,1\n").line() == 3);
    CHECK(std::string(trace_error("time,bs\n0,1\n").what()) ==
          "perfcast::read_trace: t.csv:1: missing column time_s, time_ms, time_us or time_ns; the "
          "header (the first line that is not a comment) has the columns: \"time, bs\"");
    CHECK(has(trace_error("time_ms,n\n0,1\n").what(), "missing column bs"));
    CHECK(has(trace_error("time_ms,bs\n0,1\nx,1\n").what(), "t.csv:3:1: time_ms is invalid"));
    CHECK(has(trace_error("time_ms,bs\n0,1\n1,0.5\n").what(), "t.csv:3:3: bs is invalid"));
    CHECK(has(trace_error("time_ms,bs\n0,1\n1,\n").what(), "t.csv:3:3: bs is empty"));
    CHECK(has(trace_error("time_ms,bs\n").what(), "no rows after the header"));
    CHECK(has(trace_error("").what(), "empty input"));
    CHECK(has(trace_error("time_ms,bs\n1e999,1\n").what(), "time_ms is invalid"));
}

TEST_CASE("trace_reader is an arrival source: a file replays straight into the simulator") {
    static_assert(ArrivalSource<io::trace_reader>);
    const std::string text = "time_ms,bs\n0,4\n1,4\n10,16\n10.5,20\n";
    io::trace_reader r(text, "t.csv");
    const auto t = [](int b, int) { return duration{5.0 + b, units::ms}; };
    const server_config c = make_server({.gears = gear_set::every(16),
                                         .window = 2_ms,
                                         .stream_cube = core_count{1},
                                         .card_cube = core_count{1}},
                                        t);
    const serving_result s = simulate(c, r);
    // The trace of the simulator's window test: latencies 15, 14, 26, 55.5 ms.
    CHECK(s.requests == 4);
    CHECK(s.mean.in(units::ms) == doctest::Approx(27.625).epsilon(1e-9));
    CHECK(r.rows() == 4);
}

}  // namespace test_histogram
