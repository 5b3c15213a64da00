// Tests for perfcast/profile/csv.hpp: RFC 4180 reading, the profilers' quirks, errors with
// locations, chunk boundaries, and a generated million-row file.
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <perfcast/profile/csv.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_csv {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using perfcast::parse_error;
using perfcast::profile::csv_options;
using perfcast::profile::csv_reader;
using perfcast::profile::parse_csv;

namespace {

using rows = std::vector<std::vector<std::string>>;

// Reads `text` through a stream with a `chunk`-byte buffer, so every chunk boundary is crossed.
rows read_stream(const std::string& text, std::size_t chunk, csv_options opt = {}) {
    opt.buffer_bytes = chunk;
    std::istringstream in(text);
    csv_reader r(in, "chunked", opt);
    rows out;
    while (r.next()) out.push_back(r.record().to_strings());
    return out;
}

// The same text read from memory and through streams with buffers of 4..13 bytes must agree.
rows read_all_ways(const std::string& text, csv_options opt = {}) {
    rows mem = parse_csv(text, "mem", opt);
    for (std::size_t chunk = 4; chunk <= 13; ++chunk) {
        CHECK_MESSAGE(read_stream(text, chunk, opt) == mem, "buffer of ", chunk, " bytes");
    }
    CHECK(read_stream(text, 65536, opt) == mem);
    return mem;
}

parse_error error_of(const std::string& text, csv_options opt = {}) {
    try {
        (void)parse_csv(text, "t.csv", opt);
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error for: ", text);
    return parse_error("x", "", 0, 0, "", "");
}

}  // namespace

TEST_CASE("csv: plain, quoted, doubled quotes, embedded delimiters, line ends and TABs") {
    const std::string text =
        "a,b,c\n"
        "1,\"x,y\",\"he said \"\"hi\"\"\"\n"
        "\"multi\nline\",\"1736413971558972.912\t\",\n"
        "\"\",,\"\"\"\"\n";
    const rows r = read_all_ways(text);
    REQUIRE(r.size() == 4);
    CHECK(r[0] == std::vector<std::string>{"a", "b", "c"});
    CHECK(r[1] == std::vector<std::string>{"1", "x,y", "he said \"hi\""});
    CHECK(r[2] == std::vector<std::string>{"multi\nline", "1736413971558972.912\t", ""});
    CHECK(r[3] == std::vector<std::string>{"", "", "\""});
}

TEST_CASE("csv: CRLF, lone CR, BOM, no final line end, blank lines") {
    CHECK(read_all_ways("a,b\r\n1,2\r\n") == rows{{"a", "b"}, {"1", "2"}});
    CHECK(read_all_ways("a,b\r1,2\r") == rows{{"a", "b"}, {"1", "2"}});
    CHECK(read_all_ways("\xEF\xBB\xBF"
                        "a,b\n1,2") == rows{{"a", "b"}, {"1", "2"}});
    CHECK(read_all_ways("a,b\n\n\r\n1,2\n\n") == rows{{"a", "b"}, {"1", "2"}});
    // CRLF inside quotes is data.
    CHECK(read_all_ways("\"x\r\ny\",z\r\n") == rows{{"x\r\ny", "z"}});
    // A trailing delimiter at the end of the input is one more (empty) field.
    CHECK(read_all_ways("a,b\n1,") == rows{{"a", "b"}, {"1", ""}});
    // A line with only "" is one empty field; blank lines are kept when asked.
    CHECK(read_all_ways("a\n\"\"\n") == rows{{"a"}, {""}});
    csv_options keep;
    keep.skip_empty_lines = true;
    keep.skip_empty_lines = false;
    CHECK(read_all_ways("a\n\nb\n", keep) == rows{{"a"}, {""}, {"b"}});
}

TEST_CASE("csv: empty inputs") {
    CHECK(read_all_ways("").empty());
    CHECK(read_all_ways("\n\n\r\n").empty());
    CHECK(read_all_ways("\xEF\xBB\xBF").empty());
}

TEST_CASE("csv: invalid UTF-8 and NUL bytes pass through unchanged") {
    const std::string bad = std::string("\xFF\xFE", 2) + std::string(1, '\0') + "\xC3";
    const rows r = read_all_ways("a,b\n" + bad + ",\"" + bad + "\"\n");
    REQUIRE(r.size() == 2);
    CHECK(r[1][0] == bad);
    CHECK(r[1][1] == bad);
}

TEST_CASE("csv: a quote inside an unquoted field is a literal byte") {
    CHECK(read_all_ways("ab\"c,d\n") == rows{{"ab\"c", "d"}});
}

TEST_CASE("csv: field positions count physical lines and byte columns") {
    csv_reader r(std::string_view("h1,h2\n\"a\nb\",c\nx,\"y\"\n"), "pos");
    REQUIRE(r.next());
    REQUIRE(r.next());
    CHECK(r.record().line() == 2);
    CHECK(r.record().position(0).line == 2);
    CHECK(r.record().position(0).column == 1);
    CHECK(r.record().position(1).line == 3);
    CHECK(r.record().position(1).column == 4);
    REQUIRE(r.next());
    CHECK(r.record().line() == 4);
    CHECK(r.record().position(1).column == 3);
    CHECK_FALSE(r.next());
    CHECK(r.records_read() == 3);
}

TEST_CASE("csv: errors name the source, line, column and the text") {
    SUBCASE("unterminated quote: located at the opening quote") {
        const parse_error e = error_of("a,b\n1,\"open\n2,3\n");
        CHECK(e.source() == "t.csv");
        CHECK(e.line() == 2);
        CHECK(e.column() == 3);
        CHECK(e.text().rfind("\"open\n2,3", 0) == 0);
        CHECK(std::string(e.what()).find("unterminated") != std::string::npos);
        CHECK(std::string(e.what()).find("t.csv:2:3") != std::string::npos);
    }
    SUBCASE("bytes after a closing quote") {
        const parse_error e = error_of("a,b\n1,\"x\"y,2\n");
        CHECK(e.line() == 2);
        CHECK(e.column() == 6);
        CHECK(e.text() == "\"x\"y");
        CHECK(std::string(e.what()).find("after a closing quote") != std::string::npos);
    }
    SUBCASE("a space after a closing quote is also an error (RFC 4180)") {
        const parse_error e = error_of("\"x\" ,y\n");
        CHECK(e.line() == 1);
        CHECK(e.column() == 4);
    }
    SUBCASE("field count differs from the header: line and both counts") {
        const parse_error e = error_of("a,b,c\n1,2,3\n4,5\n");
        CHECK(e.line() == 3);
        const std::string w = e.what();
        CHECK(w.find("2 fields where the first record has 3") != std::string::npos);
        CHECK(e.text() == "4,5");  // the fields with their separators (issue 12 item 5)
    }
    SUBCASE("truncated last row") {
        const parse_error e = error_of("a,b,c\n1,2,3\n4,5");
        CHECK(e.line() == 3);
    }
    SUBCASE("too many fields") {
        const parse_error e = error_of("a,b\n1,2,3\n");
        CHECK(e.line() == 2);
        CHECK(std::string(e.what()).find("3 fields where the first record has 2") !=
              std::string::npos);
    }
    SUBCASE("a record longer than the limit") {
        csv_options o;
        o.max_record_bytes = 100;
        const parse_error e = error_of("a,b\n" + std::string(200, 'x') + ",1\n", o);
        CHECK(e.line() == 2);
        CHECK(std::string(e.what()).find("longer than 100 bytes") != std::string::npos);
        // A missing closing quote is caught by the same limit long before the end of a big file.
        std::string big = "a\n\"";
        for (int i = 0; i < 1000; ++i) big += "row,with,fields\n";
        const parse_error e2 = error_of(big, o);
        CHECK(e2.line() == 2);
    }
    SUBCASE("the default limit is 1 MiB") {
        CHECK(csv_options{}.max_record_bytes == 1024u * 1024u);
        const std::string ok(1024 * 1024 - 2, 'y');
        CHECK(parse_csv(ok + "\n").at(0).at(0).size() == ok.size());
        CHECK_THROWS_AS((void)parse_csv(std::string(1024 * 1024 + 10, 'y')), parse_error);
    }
    SUBCASE("errors through a stream with tiny chunks are located the same") {
        csv_options o;
        o.buffer_bytes = 4;
        std::istringstream in("a,b\n1,\"x\"y,2\n");
        csv_reader r(in, "s.csv", o);
        CHECK(r.next());
        try {
            (void)r.next();
            FAIL("expected a parse_error");
        } catch (const parse_error& e) {
            CHECK(e.line() == 2);
            CHECK(e.column() == 6);
        }
    }
    SUBCASE("the message shows control and non-ASCII bytes escaped") {
        const parse_error e = error_of("\"a\tb\xFF\"z\n");
        CHECK(std::string(e.what()).find("a\\tb\\xFF") != std::string::npos);
    }
}

TEST_CASE("csv: field count check can be switched off") {
    csv_options o;
    o.check_field_count = false;
    CHECK(parse_csv("a,b,c\n1\n", "t", o) == rows{{"a", "b", "c"}, {"1"}});
}

TEST_CASE("csv: the 910B3 torch_npu fixture (TAB inside quoted start times)") {
    std::ifstream f(PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B3_matmul.csv",
                    std::ios::binary);
    REQUIRE(f);
    csv_reader r(f, "kernel_details_910B3_matmul.csv");
    std::size_t n = 0;
    while (r.next()) {
        CHECK(r.record().size() == 46);
        if (n == 1) {
            CHECK(r.record()[8] == "1736413971558972.912\t");
            CHECK(r.record()[14] == "\"81920,4096;8192,512\"");
        }
        ++n;
    }
    CHECK(n == 30);  // header + 29 rows (the data README says 28; the file has 29)
}

TEST_CASE("csv: a generated file of a million rows") {
    // One million data rows of 4 fields (one quoted with an embedded comma): about 28 MB. Read
    // from memory so that the test measures the reader, not the disk; the content check is
    // exact (sum of a column, count, a spot check), the time is only printed.
    constexpr int n_rows = 1'000'000;
    std::string text = "Type,Duration(us),Input Shapes,Block Dim\n";
    text.reserve(30u * n_rows);
    for (int i = 0; i < n_rows; ++i) {
        text += "Add,";
        text += std::to_string(i % 1000);
        text += ",\"8,";
        text += std::to_string(i % 7);
        text += "\",40\n";
    }
    const auto t0 = std::chrono::steady_clock::now();
    csv_reader r(std::string_view(text), "generated");
    REQUIRE(r.next());
    long long sum = 0;
    long long count = 0;
    while (r.next()) {
        const auto& rec = r.record();
        sum += static_cast<long long>(rec[1].size());  // cheap exact check, no parsing cost
        if (count == 123456) CHECK(rec[2] == "8,4");   // 123456 % 7 == 4
        ++count;
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(count == n_rows);
    // Digits of i % 1000 over a million rows: 1000 x (10 x 1 + 90 x 2 + 900 x 3) = 2,890,000.
    CHECK(sum == 2'890'000);
    const double mb = static_cast<double>(text.size()) / 1e6;
    MESSAGE("read ", mb, " MB in ", secs, " s: ", mb / secs, " MB/s");
}

}  // namespace test_csv
