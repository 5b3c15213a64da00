// Tests for perfcast/io/json_reader.hpp (the JSON pull reader) and perfcast/profile/timeline.hpp
// (msprof / torch_npu / Kineto timelines): known answers on small texts, and the real timelines
// of tests/data/profiles/real, whose counts below were taken with Python's json module
// (independently of this reader).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include <perfcast/io/json.hpp>
#include <perfcast/io/json_reader.hpp>
#include <perfcast/profile/timeline.hpp>

#include "../examples/perfcast/commands.hpp"
#include "cli_support.hpp"
#include "support.hpp"

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_timeline {

using perfcast::parse_error;
using perfcast::io::json_cursor;
using namespace perfcast::profile;
namespace units = perfcast::units;

namespace {

const std::string real_dir = PERFCAST_SOURCE_DIR "/tests/data/profiles/real/";

parse_error json_error(std::string_view text) {
    try {
        json_cursor c(text, "t.json");
        c.skip_value();
        c.end();
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error for: ", text);
    return parse_error("x", "", 0, 0, "", "");
}

/// The bytes of `path`.
std::string bytes_of(const std::filesystem::path& path) {
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// `text` with every `from` replaced by `to`, and how many there were.
std::size_t replace_all(std::string& text, std::string_view from, std::string_view to) {
    std::size_t n = 0;
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
        ++n;
    }
    return n;
}

}  // namespace

TEST_CASE("json_reader: values, escapes and the grammar") {
    json_cursor c(R"({"a": [1, -2.5e3, "x\"\\\/\n\u00e9\ud83d\ude00", true, null, {}], "b": 0})",
                  "t.json");
    std::string key;
    std::string scratch;
    c.begin_object();
    REQUIRE(c.next_member(key));
    CHECK(key == "a");
    c.begin_array();
    REQUIRE(c.next_element());
    CHECK(c.number() == "1");
    REQUIRE(c.next_element());
    CHECK(c.number() == "-2.5e3");
    REQUIRE(c.next_element());
    // é is U+00E9 (C3 A9 in UTF-8); the emoji is the pair D83D DE00 = U+1F600 (F0 9F 98 80).
    CHECK(c.string(scratch) == "x\"\\/\n\xC3\xA9\xF0\x9F\x98\x80");
    REQUIRE(c.next_element());
    CHECK(c.boolean());
    REQUIRE(c.next_element());
    c.null();
    REQUIRE(c.next_element());
    c.skip_value();
    CHECK_FALSE(c.next_element());
    REQUIRE(c.next_member(key));
    CHECK(key == "b");
    CHECK(c.peek() == json_cursor::kind::number);
    CHECK(c.number() == "0");
    CHECK_FALSE(c.next_member(key));
    c.end();
}

TEST_CASE("json_reader: skip_value walks any nesting without recursion") {
    const std::string deep = std::string(500, '[') + std::string(500, ']');
    json_cursor one(R"([{"k": [1, {"x": {"y": []}}, "s"]}, 2])", "t");
    one.skip_value();
    one.end();
    json_cursor d(deep, "d");
    d.skip_value();
    d.end();
    const parse_error e = json_error(std::string(513, '[') + std::string(513, ']'));
    CHECK(std::string(e.what()).find("nesting deeper than 512") != std::string::npos);
}

TEST_CASE("json_reader: errors name the line and column") {
    const parse_error e = json_error("{\n  \"a\": 1,\n  \"b\" 2\n}");
    CHECK(e.line() == 3);
    CHECK(e.column() == 7);
    CHECK(std::string(e.what()).find("expected ':'") != std::string::npos);
    CHECK(std::string(json_error("[1, 2").what()).find("end of the text") != std::string::npos);
    CHECK(std::string(json_error("[01]").what()).find("expected ','") != std::string::npos);
    CHECK(std::string(json_error("[1.]").what()).find("digits after the decimal point") !=
          std::string::npos);
    CHECK(std::string(json_error("\"a\nb\"").what()).find("control byte") != std::string::npos);
    CHECK(std::string(json_error("\"\\x\"").what()).find("unknown escape") != std::string::npos);
    CHECK(std::string(json_error("\"\\ud83d\"").what()).find("surrogate") != std::string::npos);
    CHECK(std::string(json_error("[1] x").what()).find("after the end") != std::string::npos);
    CHECK(std::string(json_error("[tru]").what()).find("true or false") != std::string::npos);
    CHECK(std::string(json_error("").what()).find("end of the text") != std::string::npos);
}

TEST_CASE("timeline: spans, host API classes and the clock from a small trace") {
    // Metadata after the events it names, ts as strings and numbers, one damaged span.
    const std::string text = R"({"traceEvents": [
      {"name": "MatMul", "pid": 7, "tid": 1, "ts": "1000.500", "dur": 20, "ph": "X",
       "args": {"Task Type": "AI_CORE"}},
      {"name": "AscendCL@aclrtMemcpyAsync", "pid": 8, "tid": 42, "ts": 990.25, "dur": 5,
       "ph": "X", "args": {"Mode": "ACL_RTS"}},
      {"name": "Node@launch", "pid": 8, "tid": 42, "ts": "996", "dur": 3, "ph": "X",
       "args": {"Mode": "launch"}},
      {"name": "AscendCL@aclnnAdd", "pid": 8, "tid": 42, "ts": "995", "dur": 6, "ph": "X",
       "args": {"Mode": "ACL_NN"}},
      {"name": "AscendCL@aclrtSynchronizeStream", "pid": 8, "tid": 42, "ts": "1001", "dur": 30,
       "ph": "X"},
      {"name": "AscendCL@aclrtSetDevice", "pid": 8, "tid": 42, "ts": "900", "dur": 1, "ph": "X"},
      {"name": "broken", "pid": 7, "tid": 1, "ts": "soon", "dur": 1, "ph": "X"},
      {"name": "AI Core Freq", "pid": 9, "tid": 0, "ts": "1000", "ph": "C", "args": {"MHz": 1800}},
      {"name": "AI Core Freq", "pid": 9, "tid": 0, "ts": "1010", "ph": "C", "args": {"MHz": 1200}},
      {"name": "py", "pid": 10, "tid": 10, "ts": "1", "dur": 1, "ph": "X", "cat": "cpu_op"},
      {"name": "process_name", "pid": 7, "ph": "M", "args": {"name": "Ascend Hardware"}},
      {"name": "process_name", "pid": 8, "ph": "M", "args": {"name": "CANN"}},
      {"name": "process_name", "pid": 9, "ph": "M", "args": {"name": "AI Core Freq"}}
    ], "displayTimeUnit": "ns"})";
    const timeline t = parse_timeline(text, "small.json");
    CHECK(t.events == 13);
    REQUIRE(t.device_tasks.size() == 1);
    CHECK(t.device_tasks[0].name == "MatMul");
    CHECK(t.device_tasks[0].task_type == "AI_CORE");
    CHECK(t.device_tasks[0].start.ns == 1000500);
    CHECK(t.device_tasks[0].dur.in(units::us) == 20.0);
    REQUIRE(t.host_api.size() == 5);
    const auto totals = host_api_totals(t);
    const auto of = [&totals](host_api_kind k) { return totals[static_cast<std::size_t>(k)]; };
    CHECK(of(host_api_kind::copy).calls == 1);
    CHECK(of(host_api_kind::launch).calls == 1);
    CHECK(of(host_api_kind::op_api).calls == 1);
    CHECK(of(host_api_kind::synchronize).time.in(units::us) == 30.0);
    CHECK(of(host_api_kind::other).calls == 1);
    CHECK(t.host_api[0].start.ns == 990250);  // a number, read exactly
    CHECK(t.host_api[0].thread == 42);
    REQUIRE(t.skipped_count == 1);
    CHECK(t.skipped[0].reason.find("'broken'") != std::string::npos);
    CHECK(t.skipped[0].index == 6);  // its place in the event list
    REQUIRE(t.aicore_clock.size() == 2);
    // Over [1000, 1020] us: 1800 MHz for 10 us, 1200 MHz for 10 us: mean 1500.
    const auto clock =
        clock_over(t, perfcast::profile::timestamp{1000000}, perfcast::profile::timestamp{1020000});
    REQUIRE(clock.has_value());
    CHECK(clock->mean.in(units::MHz) == doctest::Approx(1500.0).epsilon(1e-12));
    CHECK(clock->low.in(units::MHz) == 1200.0);
    CHECK(clock->high.in(units::MHz) == 1800.0);
    CHECK_FALSE(clock->constant());
}

TEST_CASE("timeline: what is refused") {
    CHECK_THROWS_WITH_AS((void)parse_timeline(R"({"other": 1})", "x.json"),
                         doctest::Contains("no \"traceEvents\""), parse_error);
    CHECK_THROWS_WITH_AS((void)parse_timeline("42", "x.json"),
                         doctest::Contains("a list of trace events"), parse_error);
    // A list cut short (a profiler that died while writing) is an error at its end.
    CHECK_THROWS_AS((void)parse_timeline(R"([{"ph": "X", "ts": "1"}, )", "x.json"), parse_error);
    const timeline t = parse_timeline(R"([1, {"ph": "X"}])", "x.json");
    CHECK(t.events == 2);
    CHECK(t.skipped_count == 1);  // the number; the object is an event of no known process
}

TEST_CASE("timeline: the real timelines (msprof, torch_npu 2024/2025/2026, Kineto GPU)") {
    SUBCASE("msprof_*.json: 14 Ascend Hardware spans, 145 CANN spans, 2 clock samples") {
        const timeline t = read_timeline_file(
            real_dir +
            "msprof_helix_2026_PROF/mindstudio_profiler_output/msprof_20260511093035.json");
        CHECK(t.events == 229);
        CHECK(t.device_tasks.size() == 14);
        CHECK(t.host_api.size() == 145);
        REQUIRE(t.aicore_clock.size() == 2);
        CHECK(t.aicore_clock[0].clock.in(units::MHz) == 1800.0);
        CHECK(t.skipped_count == 0);
        const auto totals = host_api_totals(t);
        CHECK(totals[static_cast<std::size_t>(host_api_kind::launch)].calls ==
              11);  // 9 Node@launch + 2 aclrtLaunchKernelWithHostArgs
        CHECK(totals[static_cast<std::size_t>(host_api_kind::copy)].calls ==
              2);  // aclrtMemcpyAsync
    }
    SUBCASE("torch_npu trace_view.json, January 2025: 18 device spans, 77 CANN spans") {
        const timeline t = read_timeline_file(
            real_dir +
            "torchnpu_2025_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
        CHECK(t.events == 723);
        CHECK(t.device_tasks.size() == 18);
        CHECK(t.host_api.size() == 77);
        CHECK(t.aicore_clock.size() == 2);
        CHECK(t.processes.at("Python") == 184);
    }
    SUBCASE("torch_npu trace_view.json, January 2024 (no clock counter)") {
        const timeline t =
            read_timeline_file(real_dir + "torchnpu_2024_trace_view_mstt/trace_view.json");
        CHECK(t.events == 1115);
        CHECK(t.device_tasks.size() == 85);
        CHECK(t.host_api.size() == 92);
        CHECK(t.aicore_clock.empty());
    }
    SUBCASE("Kineto GPU trace: Kernel and Memcpy on the device, Runtime calls on the host") {
        const timeline t = read_timeline_file(
            real_dir + "gpu_torch_profiler_resnet50/worker0.1623143089861.pt.trace.json");
        CHECK(t.events == 325);
        CHECK(t.device_tasks.size() == 24);  // 22 Kernel + 2 Memcpy
        CHECK(t.host_api.size() == 37);      // the Runtime category
    }
}

TEST_CASE("cli: report reads the folder's timeline and uses the AI Core clock it measured") {
    namespace fs = std::filesystem;
    namespace cli = perfcast::cli;
    const perfcast_test::scratch_dir dir("timeline_cli");
    const fs::path run = dir.path / "run_ascend_pt";
    fs::copy(real_dir + "torchnpu_helix_2026_standalone", run, fs::copy_options::recursive);
    const std::string folder = run.string();

    const auto same = perfcast_test::run_command(
        cli::report_command, {folder, "--chip", "ascend910b2", "--format", "json"});
    REQUIRE(same.status == 0);
    CHECK(same.err.find("measured the AI cores") == std::string::npos);  // 1800 = the preset's
    CHECK(same.out.find("\"aicore_clock\"") != std::string::npos);

    // The same run with its clock counter rewritten to 1650 MHz: utilization is cycles over the
    // measured clock, so every recomputed cube utilization grows by 1800 / 1650.
    const fs::path trace = run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json";
    std::string text = bytes_of(trace);
    REQUIRE(replace_all(text, "\"MHz\": 1800", "\"MHz\": 1650") == 2);
    std::ofstream(trace, std::ios::binary) << text;
    const auto slow = perfcast_test::run_command(
        cli::report_command, {folder, "--chip", "ascend910b2", "--format", "json"});
    REQUIRE(slow.status == 0);
    CHECK(slow.err.find("measured the AI cores at 1650 MHz (2 samples); the chip says 1800 MHz") !=
          std::string::npos);
    const double before = perfcast_test::json_number(same.out, "cube_utilization_pct");
    const double after = perfcast_test::json_number(slow.out, "cube_utilization_pct");
    REQUIRE(before > 0);
    CHECK(after / before == doctest::Approx(1800.0 / 1650.0).epsilon(1e-9));
}

TEST_CASE("read_file_text: the whole file, byte for byte, or an error naming it") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "perfcast_test_read_file_text";
    fs::create_directories(dir);
    const std::string bytes = std::string("a\0b\r\n", 5) + std::string(70000, 'x') + "\xff";
    const fs::path file = dir / "some.json";
    std::ofstream(file, std::ios::binary) << bytes;
    CHECK(perfcast::profile::read_file_text(file.string(), "test") == bytes);

    const fs::path empty = dir / "empty.json";
    std::ofstream(empty, std::ios::binary).flush();
    CHECK(perfcast::profile::read_file_text(empty.string(), "test").empty());

    CHECK_THROWS_WITH_AS((void)perfcast::profile::read_file_text(dir.string(), "test"),
                         doctest::Contains("is a directory, expected a file"),
                         perfcast::parse_error);
    CHECK_THROWS_WITH_AS(
        (void)perfcast::profile::read_file_text((dir / "absent.json").string(), "test"),
        doctest::Contains("cannot open file for reading"), perfcast::parse_error);
    // The timeline reader names itself by its public name.
    CHECK_THROWS_WITH_AS(
        (void)perfcast::profile::read_timeline_file((dir / "absent.json").string()),
        doctest::Contains("perfcast::read_timeline_file:"), perfcast::parse_error);
    fs::remove_all(dir);
}

TEST_CASE("file_text: the file's bytes mapped (or copied), the same errors as read_file_text") {
    namespace fs = std::filesystem;
    using perfcast::profile::file_text;
    const perfcast_test::scratch_dir dir("file_text");
    const std::string bytes = std::string("a\0b\r\n", 5) + std::string(70000, 'x') + "\xff";
    const fs::path file = dir.path / "some.json";
    std::ofstream(file, std::ios::binary) << bytes;
    {
        file_text t = file_text::read(file.string(), "test");
        CHECK(t.view() == bytes);
#if __has_include(<sys/mman.h>)
        CHECK(t.mapped());  // a non-empty regular file on a POSIX system is mapped, not copied
#endif
        // Moved: the bytes go with it; the moved-from object is empty, never a dangling view.
        file_text u = std::move(t);
        CHECK(u.view() == bytes);
        CHECK(t.view().empty());  // NOLINT(bugprone-use-after-move): the state is specified
        u = file_text::read(file.string(), "test");
        CHECK(u.view() == bytes);
    }
    // Empty: nothing to map, an empty copy.
    const fs::path empty = dir.path / "empty.json";
    std::ofstream(empty, std::ios::binary).flush();
    const file_text e = file_text::read(empty.string(), "test");
    CHECK(e.view().empty());
    CHECK_FALSE(e.mapped());
    CHECK_THROWS_WITH_AS((void)file_text::read(dir.path.string(), "test"),
                         doctest::Contains("is a directory, expected a file"),
                         perfcast::parse_error);
    CHECK_THROWS_WITH_AS((void)file_text::read((dir.path / "absent.json").string(), "test"),
                         doctest::Contains("cannot open file for reading"), perfcast::parse_error);

    // read_timeline_file (mapped) reads what parse_timeline reads from the same text.
    const std::string trace =
        R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"Ascend Hardware"}},
{"ph":"X","name":"MatMul","pid":1,"tid":1,"ts":"10.000","dur":5,"args":{"Task Type":"AI_CORE"}}])";
    const fs::path tfile = dir.path / "trace.json";
    std::ofstream(tfile, std::ios::binary) << trace;
    const auto from_file = perfcast::profile::read_timeline_file(tfile.string());
    const auto from_text = perfcast::profile::parse_timeline(trace, tfile.string());
    REQUIRE(from_file.device_tasks.size() == 1);
    CHECK(from_file.device_tasks.size() == from_text.device_tasks.size());
    CHECK(from_file.device_tasks[0].name == "MatMul");
    CHECK(from_file.device_tasks[0].start == from_text.device_tasks[0].start);
}

TEST_CASE("timeline: a skipped span is named by its place in the file's event list") {
    // Metadata events come first here, so the span's place among the kept spans (0) and in the
    // file (2) differ: the file's is reported.
    const std::string text = R"([
      {"name": "process_name", "pid": 7, "ph": "M", "args": {"name": "Ascend Hardware"}},
      {"name": "thread_name", "pid": 7, "tid": 1, "ph": "M", "args": {"name": "Stream 1"}},
      {"name": "broken", "pid": 7, "tid": 1, "ts": "soon", "dur": 1, "ph": "X"},
      {"name": "MatMul", "pid": 7, "tid": 1, "ts": "5", "dur": 1, "ph": "X"}
    ])";
    const timeline t = parse_timeline(text, "meta_first.json");
    REQUIRE(t.skipped_count == 1);
    CHECK(t.skipped[0].index == 2);
    REQUIRE(t.device_tasks.size() == 1);
    CHECK(t.device_tasks[0].name == "MatMul");
    CHECK(t.device_tasks[0].task_type.empty());  // no Task Type and no cat
}

TEST_CASE("timeline: a BOM is dropped; a span over a day is skipped, never summed to inf") {
    const std::string text =
        "\xEF\xBB\xBF"
        R"([
      {"name": "process_name", "pid": 7, "ph": "M", "args": {"name": "Ascend Hardware"}},
      {"name": "huge", "pid": 7, "tid": 1, "ts": "1", "dur": 1e308, "ph": "X"},
      {"name": "MatMul", "pid": 7, "tid": 1, "ts": "5", "dur": 1, "ph": "X"}
    ])";
    const timeline t = parse_timeline(text, "bom.json");
    REQUIRE(t.skipped_count == 1);
    CHECK(t.skipped[0].index == 1);
    CHECK(t.skipped[0].reason == "span 'huge' whose dur is a time over a day (86400000000 us)");
    REQUIRE(t.device_tasks.size() == 1);
    CHECK(t.device_tasks[0].name == "MatMul");
}

TEST_CASE("cli: a damaged timeline is warned of and left out; its skipped events are listed") {
    namespace fs = std::filesystem;
    namespace cli = perfcast::cli;
    const perfcast_test::scratch_dir dir("timeline_damaged");
    const fs::path run = dir.path / "run_ascend_pt";
    fs::copy(real_dir + "torchnpu_helix_2026_standalone", run, fs::copy_options::recursive);
    const std::string folder = run.string();
    const fs::path trace = run / "ASCEND_PROFILER_OUTPUT" / "trace_view.json";
    const std::string text = bytes_of(trace);
    // Every clock sample at 0 MHz: skipped, and each is named on stderr.
    std::string zero = text;
    REQUIRE(replace_all(zero, "\"MHz\": 1800", "\"MHz\": 0") == 2);
    std::ofstream(trace, std::ios::binary) << zero;
    auto r = perfcast_test::run_command(cli::report_command, {folder, "--chip", "ascend910b2"});
    CHECK(r.status == 0);
    CHECK(r.err.find("perfcast: warning: skipped event: " + trace.generic_string() + ": event ") !=
          std::string::npos);
    CHECK(r.err.find("AI Core Freq counter without a time or a clock in [1, 10000] MHz") !=
          std::string::npos);
    // Truncated: the report goes on from the op table, and says so; --strict refuses it.
    std::ofstream(trace, std::ios::binary) << text.substr(0, text.size() / 2);
    r = perfcast_test::run_command(cli::report_command, {folder, "--chip", "ascend910b2"});
    CHECK(r.status == 0);
    CHECK(r.err.find("the report goes on without the timeline") != std::string::npos);
    CHECK(r.out.find("Time by op type") != std::string::npos);
    r = perfcast_test::run_command(cli::report_command,
                                   {folder, "--chip", "ascend910b2", "--strict"});
    CHECK(r.status == 1);
    CHECK(r.err.find(trace.generic_string() + ":1:") != std::string::npos);  // the JSON error
    CHECK(r.err.find("the report goes on") == std::string::npos);
}

TEST_CASE("json writer: bytes that are not UTF-8 become U+FFFD, so the output stays JSON") {
    using perfcast::io::json_quote;
    CHECK(json_quote("bad\xff\xfeutf8") == "\"bad\\ufffd\\ufffdutf8\"");
    CHECK(json_quote("\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80") ==
          "\"\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80\"");              // 2, 3 and 4 bytes pass
    CHECK(json_quote("\xC0\xAF") == "\"\\ufffd\\ufffd\"");             // overlong '/'
    CHECK(json_quote("\xED\xA0\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
    CHECK(json_quote("\xF4\x90\x80\x80") == "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // past U+10FFFF
    CHECK(json_quote("a\xE2\x82") == "\"a\\ufffd\\ufffd\"");                      // cut at the end
    // What the writer makes, the reader takes back (U+FFFD is 3 bytes of UTF-8).
    std::string back;
    const std::string quoted = json_quote("x\xff\n");
    json_cursor c(quoted, "w.json");
    CHECK(c.string(back) == "x\xEF\xBF\xBD\n");
    // Each byte that starts no sequence is one U+FFFD (not one per maximal subpart).
    CHECK(json_quote("\xE0\x80\x80") == "\"\\ufffd\\ufffd\\ufffd\"");  // overlong, 3 bytes
    CHECK(json_quote("\xF0\x8F\xBF\xBF") ==
          "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");   // overlong, 4 bytes
    CHECK(json_quote("\x80") == "\"\\ufffd\"");  // a lone continuation
    CHECK(json_quote("\xF5\x80\x80\x80") ==
          "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");                         // F5 starts nothing
    CHECK(json_quote("\xF0\x9F\x98") == "\"\\ufffd\\ufffd\\ufffd\"");  // a cut 4-byte
}

}  // namespace test_timeline
