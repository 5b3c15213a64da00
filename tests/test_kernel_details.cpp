// Tests for perfcast/profile/kernel_details.hpp and profile/pcie.hpp: header spellings, N/A,
// numbers, timestamps, shapes, dtypes, MatMul shape checks, errors, and the two real fixtures.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/pcie.hpp>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_kernel_details {

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

using namespace perfcast::profile;
using perfcast::dtype;
using perfcast::parse_error;
namespace units = perfcast::units;

namespace {

const std::string b3_path =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B3_matmul.csv";
const std::string b1_path =
    PERFCAST_SOURCE_DIR "/tests/data/profiles/kernel_details_910B1_train.csv";

// Strict reading: the first damaged row is the error (the default skips it, tested below).
parse_error read_error(const std::string& text) {
    kernel_reader_options strict;
    strict.strict = true;
    try {
        (void)parse_kernel_details(text, "k.csv", strict);
    } catch (const parse_error& e) {
        return e;
    }
    FAIL("no parse_error for: ", text);
    return parse_error("x", "", 0, 0, "", "");
}

tensor_shape shp(std::vector<std::int64_t> d) {
    return tensor_shape{std::move(d)};
}

}  // namespace

TEST_CASE("kernel_details: msprof and torch_npu spellings read the same row") {
    const std::string msprof =
        "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
        "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,"
        "HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
        "Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,"
        "aic_mac_ratio,aic_mte2_ratio,aiv_time(us),aiv_total_cycles,aiv_vec_ratio,"
        "aiv_mte2_ratio,cube_utilization(%)\n"
        "0,1,7,2,mm,MatMulV2,dynamic,AI_CORE,100.5,185.504,1.087,16,0,NO,"
        "\"\"\"4096,12288;4608,12288\"\"\",FLOAT16;FLOAT16,ND;ND,\"\"\"4096,4608\"\"\",FLOAT16,"
        "ND,N/A,183.87,5295467,0.824,0.964,0,0,0,0,79.295\n";
    const std::string torch =
        "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),"
        "Block Num,Mix Block Num,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
        "Output Data Types,Output Formats,aicore_time(us),aic_total_cycles,aic_mac_ratio,"
        "aic_mte2_ratio,aiv_time(us),aiv_total_cycles,aiv_vec_ratio,aiv_mte2_ratio,"
        "cube_utilization(%),Some Future Column\n"
        "1,mm,MatMulV2,AI_CORE,\"100.5\t\",185.504,1.087,16,0,\"\"\"4096,12288;4608,12288\"\"\","
        "FLOAT16;FLOAT16,ND;ND,\"\"\"4096,4608\"\"\",FLOAT16,ND,183.87,5295467,0.824,0.964,0,0,"
        "0,0,79.295,whatever\n";
    const kernel_table a = parse_kernel_details(msprof);
    const kernel_table b = parse_kernel_details(torch);
    CHECK(a.header.format == kernel_format::msprof_op_summary);
    CHECK(b.header.format == kernel_format::torch_npu_kernel_details);
    REQUIRE(a.rows.size() == 1);
    REQUIRE(b.rows.size() == 1);
    for (const kernel_row* r : {&a.rows[0], &b.rows[0]}) {
        CHECK(r->name == "mm");
        CHECK(r->op_type == "MatMulV2");
        CHECK(r->task == task_type::ai_core);
        REQUIRE(r->start);
        CHECK(r->start->ns == 100500);
        CHECK(r->task_duration->in(units::us) == doctest::Approx(185.504).epsilon(1e-12));
        CHECK(r->wait->in(units::us) == doctest::Approx(1.087).epsilon(1e-12));
        CHECK(r->block_dim == 16);
        CHECK(r->mix_block_dim == 0);
        REQUIRE(r->input_shapes.size() == 2);
        CHECK(r->input_shapes[0] == shp({4096, 12288}));
        CHECK(r->input_shapes[1] == shp({4608, 12288}));
        CHECK(r->output_shapes == std::vector<tensor_shape>{shp({4096, 4608})});
        REQUIRE(r->input_types.size() == 2);
        CHECK(r->input_types[0].type == dtype::fp16);
        CHECK(r->input_formats == std::vector<std::string>{"ND", "ND"});
        CHECK(r->aic_total_cycles->in(units::cycle) == 5295467.0);
        CHECK(r->aic_mte2_ratio == 0.964);
        CHECK(r->aiv_vec_ratio == 0.0);  // a recorded 0 stays 0
        // "HF32 Eligible" NO in the msprof spelling; not written in the torch_npu one.
        CHECK(r->hf32_eligible == (r == &a.rows[0] ? std::optional<bool>(false) : std::nullopt));
        CHECK(r->cube_utilization_pct == 79.295);
        CHECK(r->notes.empty());  // A[M,K] x B[N,K]^T agrees
        CHECK(r->line == 2);
    }
    // Same content apart from the columns only one of them has.
    CHECK(a.rows[0].input_shapes == b.rows[0].input_shapes);
    CHECK(a.rows[0].aicore_time == b.rows[0].aicore_time);
}

TEST_CASE("kernel_details: the minimal format (any hardware) is accepted") {
    const kernel_table t = parse_kernel_details(
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n"
        "MatMul,AI_CORE,120.5,24,\"128,256;256,512\",fp16;fp16,\"128,512\",fp16\n"
        "Equal,AI_VECTOR_CORE,230,48,\"1,4000;400,1\",int64;int64,\"400,4000\",bool\n");
    CHECK(t.header.format == kernel_format::minimal);
    REQUIRE(t.rows.size() == 2);
    CHECK(t.rows[0].name.empty());
    CHECK_FALSE(t.rows[0].start);
    CHECK_FALSE(t.rows[0].aic_total_cycles);
    CHECK(t.rows[0].notes.empty());  // A[M,K] x B[K,N]
    CHECK(t.rows[1].input_types[0].type == dtype::int64);
    // Equal: 4000 x 8 + 400 x 8 + 1.6e6 x 1 bytes.
    REQUIRE(t.rows[1].bytes_moved());
    CHECK(t.rows[1].bytes_moved()->in(units::B) == 32000.0 + 3200.0 + 1600000.0);
}

TEST_CASE("kernel_details: N/A and empty are 'not recorded', never 0") {
    const kernel_table t = parse_kernel_details(
        "Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,"
        "Input Shapes,Input Data Types,aic_total_cycles,aiv_mte2_ratio\n"
        "h,hcom_broadcast_,HCCL,10,308926.68,N/A,0,N/A,N/A,N/A,\n"
        "m,MemSet,AI_VECTOR_CORE,11,1.5, n/a ,1,\"\"\"\"\"\",UNDEFINED,0,0.5\n");
    REQUIRE(t.rows.size() == 2);
    const kernel_row& h = t.rows[0];
    CHECK(h.task == task_type::hccl);
    CHECK_FALSE(h.wait);
    CHECK_FALSE(h.aic_total_cycles);
    CHECK_FALSE(h.aiv_mte2_ratio);
    CHECK(h.input_shapes.empty());
    CHECK(h.input_types.empty());
    CHECK(h.block_dim == 0);
    const kernel_row& m = t.rows[1];
    CHECK_FALSE(m.wait);                  // " n/a " trimmed, any case
    REQUIRE(m.input_shapes.size() == 1);  // "" = one scalar
    CHECK(m.input_shapes[0].scalar());
    REQUIRE(m.input_types.size() == 1);
    CHECK_FALSE(m.input_types[0].type);
    CHECK(m.input_types[0].text == "UNDEFINED");
    CHECK(m.notes.empty());  // UNDEFINED is not an unknown spelling
    CHECK(m.aic_total_cycles->in(units::cycle) == 0.0);
}

TEST_CASE("kernel_details: timestamps are exact integers of nanoseconds") {
    const kernel_table t = parse_kernel_details(
        "Type,Accelerator Core,Start Time(us),Duration(us)\n"
        "A,AI_CORE,\"1736413971558972.912\t\",1\n"
        "A,AI_CORE,1736413971558973.913,1\n"
        "A,AI_CORE,1736413971558973.9135,1\n"
        "A,AI_CORE,1736413971558973,1\n");
    REQUIRE(t.rows.size() == 4);
    CHECK(t.rows[0].start->ns == 1736413971558972912LL);
    CHECK(t.rows[1].start->ns == 1736413971558973913LL);
    CHECK(t.rows[2].start->ns == 1736413971558973914LL);  // 4th decimal rounds half up
    CHECK(t.rows[3].start->ns == 1736413971558973000LL);
    // 1.001 us apart: a double of microseconds at 1.7e15 resolves only 0.25 us.
    CHECK((*t.rows[1].start - *t.rows[0].start).in(units::ns) == 1001.0);
    CHECK(t.rows[0].end()->ns == 1736413971558973912LL);
}

TEST_CASE("kernel_details: timestamp arithmetic saturates instead of overflowing") {
    // Found by fuzz_csv: a row with a start time and a duration of 3e22 us made end() overflow.
    // Such a duration is now refused (more than a day, issue 16), but a start near the end of
    // the int64 range plus a day still passes it.
    constexpr std::int64_t hi = std::numeric_limits<std::int64_t>::max();
    constexpr std::int64_t lo = std::numeric_limits<std::int64_t>::min();
    kernel_reader_options strict;  // the default skips the row (tested elsewhere)
    strict.strict = true;
    CHECK_THROWS_WITH_AS(
        (void)parse_kernel_details("Type,Accelerator Core,Start Time(us),Duration(us)\n"
                                   "A,AI_CORE,1736413971558972.912,30892700000000000000000\n",
                                   "<string>", strict),
        doctest::Contains("a time over a day (86400000000 us)"), perfcast::parse_error);
    const kernel_table t = parse_kernel_details(
        "Type,Accelerator Core,Start Time(us),Duration(us)\n"
        "A,AI_CORE,9223372036854000.000,86400000000\n");
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0].end()->ns == hi);
    CHECK((timestamp{hi - 5} + perfcast::duration{1, perfcast::units::ms}).ns == hi);
    CHECK((timestamp{lo + 5} + perfcast::duration{-1, perfcast::units::ms}).ns == lo);
    CHECK((timestamp{10} + perfcast::duration{-3e25, perfcast::units::ns}).ns == lo);
    CHECK((timestamp{10} + perfcast::duration{2.4, perfcast::units::ns}).ns == 12);
    CHECK((timestamp{10} + perfcast::duration{std::nan(""), perfcast::units::ns}).ns == 10);
    // a - b beyond the int64 range: the difference in doubles, not a wrapped integer.
    CHECK((timestamp{hi} - timestamp{lo}).in(units::ns) == doctest::Approx(1.8446744073709552e19));
    CHECK((timestamp{lo} - timestamp{hi}).in(units::ns) < 0);
    CHECK((timestamp{5} - timestamp{-7}).in(units::ns) == 12.0);
}

TEST_CASE("kernel_details: shapes, dtypes and notes") {
    std::vector<tensor_shape> s;
    CHECK(detail::parse_shapes("81920,4096;8192,512", s));
    CHECK(s == std::vector<tensor_shape>{shp({81920, 4096}), shp({8192, 512})});
    CHECK(detail::parse_shapes(";", s));
    CHECK(s.size() == 2);
    CHECK(detail::parse_shapes("4096,2,512;;;4096,4096", s));
    CHECK(s.size() == 4);
    CHECK(s[1].scalar());
    CHECK(detail::parse_shapes("0,5", s));  // empty tensors are shapes too
    CHECK(s[0].elements() == 0);
    CHECK_FALSE(detail::parse_shapes("4,x", s));
    CHECK_FALSE(detail::parse_shapes("4,-1", s));
    CHECK_FALSE(detail::parse_shapes("4,,5", s));
    CHECK(shp({1LL << 40, 1LL << 40}).elements() == std::nullopt);  // overflow: unknown

    const kernel_table t = parse_kernel_details(
        "Type,Accelerator Core,Duration(us),Input Shapes,Input Data Types,Output Shapes,"
        "Output Data Types\n"
        "Foo,AI_CORE,1,\"4,x\",FLOAT,\"4\",FLOAT\n"
        "Bar,AI_CORE,1,\"4;4\",FLOAT;COMPLEX64,\"4\",DT_BF16\n"
        "Baz,AI_CORE,1,\"4;4\",FLOAT,\"4\",FLOAT\n");
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].has_note(note_kind::bad_shape));
    CHECK(t.rows[0].input_shapes.empty());
    CHECK_FALSE(t.rows[0].bytes_moved());
    CHECK(t.rows[1].has_note(note_kind::unknown_dtype));
    CHECK(t.rows[1].input_types[1].text == "COMPLEX64");
    CHECK_FALSE(t.rows[1].input_types[1].type);
    CHECK(t.rows[1].output_types[0].type == dtype::bf16);
    CHECK_FALSE(t.rows[1].bytes_moved());  // an unknown dtype: no byte count, not a guess
    CHECK(t.rows[2].has_note(note_kind::tensor_count_mismatch));
}

TEST_CASE("kernel_details: MatMul shape consistency under every transpose") {
    using detail::matmul_shapes_agree;
    // 910B1 stores A[M,K] x B[N,K]^T.
    CHECK(matmul_shapes_agree(shp({4096, 12288}), shp({4608, 12288}), shp({4096, 4608})));
    CHECK(matmul_shapes_agree(shp({128, 256}), shp({256, 512}), shp({128, 512})));      // A x B
    CHECK(matmul_shapes_agree(shp({8192, 4096}), shp({8192, 512}), shp({4096, 512})));  // A^T x B
    CHECK(matmul_shapes_agree(shp({256, 128}), shp({512, 256}), shp({128, 512})));      // A^T x B^T
    // The 910B3 fixture's rows: 81920 where 8192 fits, 15365 where 1536 fits.
    CHECK_FALSE(matmul_shapes_agree(shp({81920, 4096}), shp({8192, 512}), shp({4096, 512})));
    CHECK_FALSE(matmul_shapes_agree(shp({8192, 15365}), shp({8192, 4096}), shp({1536, 4096})));
    // Batches broadcast; a batch that does not fit conflicts.
    CHECK(matmul_shapes_agree(shp({12, 1024, 1024}), shp({12, 1024, 512}), shp({12, 1024, 512})));
    CHECK(matmul_shapes_agree(shp({2, 400, 300}), shp({300, 16}), shp({2, 400, 16})));
    CHECK(matmul_shapes_agree(shp({1, 400, 300}), shp({2, 300, 16}), shp({2, 400, 16})));
    CHECK_FALSE(matmul_shapes_agree(shp({3, 400, 300}), shp({2, 300, 16}), shp({2, 400, 16})));
    CHECK_FALSE(matmul_shapes_agree(shp({4, 2, 3}), shp({3, 5}), shp({2, 5})));
    // Rank < 2: nothing to check.
    CHECK(matmul_shapes_agree(shp({7}), shp({7}), shp({})));
}

TEST_CASE("kernel_details: the 910B3 fixture (29 rows, 12 MatMul shape conflicts)") {
    const kernel_table t = read_kernel_details_file(b3_path);
    CHECK(t.header.format == kernel_format::torch_npu_kernel_details);
    REQUIRE(t.rows.size() == 29);
    std::size_t conflicts = 0;
    for (const kernel_row& r : t.rows) {
        CHECK(r.task_duration);
        CHECK(r.start);
        if (r.has_note(note_kind::shape_conflict)) {
            ++conflicts;
            CHECK(r.op_type.rfind("MatMul", 0) == 0);
            CHECK(r.line >= 2);
            CHECK(r.line <= 13);
        }
    }
    CHECK(conflicts == 12);
    // The first row, field by field against the file.
    const kernel_row& r = t.rows[0];
    CHECK(r.name == "aclnnMatmul_MatMulCommon_MatMulV2");
    CHECK(r.start->ns == 1736413971558972912LL);
    CHECK(r.input_shapes[0] == shp({81920, 4096}));
    CHECK(r.input_types[0].type == dtype::bf16);
    CHECK(r.notes.front().detail ==
          "inputs [81920,4096] x [8192,512] cannot give [4096,512] with either input transposed");
    // FlashAttentionScore: 12 inputs, several scalar.
    CHECK(t.rows[12].input_shapes.size() == 12);
    CHECK(t.rows[12].input_types.size() == 12);
    CHECK(t.rows[12].input_types[11].type == dtype::int64);
}

TEST_CASE("kernel_details: the 910B1 fixture streams and reads whole alike") {
    std::ifstream f(b1_path, std::ios::binary);
    REQUIRE(f);
    std::vector<kernel_row> streamed;
    const kernel_header h =
        for_each_kernel_row(f, "b1", [&](const kernel_row& r) { streamed.push_back(r); });
    CHECK(h.has(kernel_column::aic_total_cycles));
    CHECK_FALSE(h.has(kernel_column::aic_mte2_ratio));  // ArithmeticUtilization columns only
    const kernel_table t = read_kernel_details_file(b1_path);
    REQUIRE(t.rows.size() == 591);
    REQUIRE(streamed.size() == t.rows.size());
    std::size_t hccl = 0;
    std::size_t aicpu = 0;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
        CHECK(streamed[i].line == t.rows[i].line);
        CHECK(streamed[i].input_shapes == t.rows[i].input_shapes);
        CHECK(streamed[i].task_duration == t.rows[i].task_duration);
        CHECK_FALSE(t.rows[i].has_note(note_kind::shape_conflict));
        if (t.rows[i].task == task_type::hccl) {
            ++hccl;
            CHECK_FALSE(t.rows[i].aic_total_cycles);
        }
        if (t.rows[i].task == task_type::ai_cpu) ++aicpu;
    }
    CHECK(hccl == 19);
    CHECK(aicpu == 7);
}

TEST_CASE("kernel_details: errors name the file, line, column, column name and text") {
    const std::string head = "Type,Accelerator Core,Duration(us),Block Dim\n";
    SUBCASE("text in a number") {
        const parse_error e = read_error(head + "A,AI_CORE,fast,1\n");
        CHECK(e.source() == "k.csv");
        CHECK(e.line() == 2);
        CHECK(e.column() == 11);
        CHECK(e.text() == "fast");
        CHECK(std::string(e.what()).find("not a number in column 'Duration(us)'") !=
              std::string::npos);
    }
    SUBCASE("1e400 is an error, not infinity") {
        const parse_error e = read_error(head + "A,AI_CORE,1e400,1\n");
        CHECK(std::string(e.what()).find("out of the range") != std::string::npos);
        CHECK(e.text() == "1e400");
    }
    SUBCASE("inf and nan are not numbers here") {
        CHECK(read_error(head + "A,AI_CORE,inf,1\n").text() == "inf");
        CHECK(read_error(head + "A,AI_CORE,nan,1\n").text() == "nan");
    }
    SUBCASE("negative duration, non-integer block dim, huge block dim") {
        CHECK(read_error(head + "A,AI_CORE,-1,1\n").text() == "-1");
        CHECK(read_error(head + "A,AI_CORE,1,1.5\n").text() == "1.5");
        CHECK(read_error(head + "A,AI_CORE,1,99999999999\n").text() == "99999999999");
    }
    SUBCASE("a bad timestamp") {
        const parse_error e =
            read_error("Type,Accelerator Core,Duration(us),Start Time(us)\nA,AI_CORE,1,12:00\n");
        CHECK(e.column() == 13);
    }
    SUBCASE("truncated row and wrong column count") {
        CHECK(read_error(head + "A,AI_CORE,1,1\nB,AI_CORE\n").line() == 3);
        CHECK(read_error(head + "A,AI_CORE,1,1,extra\n").line() == 2);
    }
    SUBCASE("missing required column") {
        const parse_error e = read_error("Type,Duration(us)\nA,1\n");
        CHECK(std::string(e.what()).find("Accelerator Core") != std::string::npos);
        CHECK(e.text() == "Type,Duration(us)");
    }
    SUBCASE("a table separated by ';' or tabs says so") {
        for (const char sep : {';', '\t'}) {
            std::string text = "Type,Accelerator Core,Duration(us)\nA,AI_CORE,1\n";
            std::replace(text.begin(), text.end(), ',', sep);
            const std::string what = read_error(text).what();
            CAPTURE(what);
            CHECK(what.find(std::string("missing required column Type (or OP Type) (the header is "
                                        "one field: the table is separated by '") +
                            (sep == ';' ? ";" : "\\t") +
                            "'; perfcast reads comma-separated tables)") != std::string::npos);
        }
    }
    SUBCASE("UTF-16 text is named, with or without a byte-order mark") {
        const std::string utf16_bom("\xFF\xFET\0y\0p\0e\0,\0", 12);
        const std::string utf16_plain("T\0y\0p\0e\0,\0", 10);
        const std::string utf16_big_endian("\0T\0y\0p\0e\0,", 10);  // NULs before the letters
        for (const std::string& text : {utf16_bom, utf16_plain, utf16_big_endian}) {
            const parse_error e = read_error(text + "\n");
            CHECK(e.line() == 1);
            CHECK(std::string(e.what()).find("the file is UTF-16 text; perfcast reads UTF-8") !=
                  std::string::npos);
        }
    }
    SUBCASE("an SQLite database, gzip data or other NUL bytes are named, not called UTF-16") {
        // The first 32 bytes of a real database (tests/data/profiles/real/msinsight_misc/
        // msprof_0.db: the SQLite header string, page size 1024, format bytes) and the first 20
        // of `gzip kernel_details.csv` (magic 1f 8b, method 08 deflate, flags 08: a file name).
        using namespace std::string_view_literals;  // "..."sv keeps the NULs
        const std::string sqlite("SQLite format 3\0\x04\0\x02\x02\0@  \0\0\0\xE0\0\0\0h,x\n"sv);
        const std::string gzip("\x1F\x8B\x08\x08\xFB\x0C\x16k\0\x03kernel_det\n"sv);
        const std::string binary("Type\0\0\x01,\x05\n"sv);
        const struct {
            const std::string& text;
            const char* says;
        } cases[] = {
            {sqlite,
             "an SQLite database, not CSV text: give its file path (a database is read "
             "from its file, not from standard input or a pipe)"},
            {gzip, "gzip-compressed, not CSV text: decompress it first (gunzip FILE"},
            {binary, "NUL bytes in the header: a binary file, not CSV text"},
        };
        for (const auto& c : cases) {
            CAPTURE(c.says);
            const parse_error e = read_error(c.text);
            const std::string what = e.what();
            CHECK(what.find(c.says) != std::string::npos);
            CHECK(what.find("UTF-16") == std::string::npos);
            CHECK(e.line() == 1);
        }
        // A database whose first record breaks the CSV layer (a quote after a comma, never
        // closed, runs past the record limit): still named from the bytes the error shows.
        kernel_reader_options small;
        small.csv.max_record_bytes = 64;
        const std::string open_quote =
            std::string("SQLite format 3\0,\""sv) + std::string(100, 'x');
        try {
            (void)parse_kernel_details(open_quote, "q.db", small);
            FAIL("no parse_error");
        } catch (const parse_error& e) {
            CHECK(std::string(e.what()).find("an SQLite database, not CSV text") !=
                  std::string::npos);
        }
    }
    SUBCASE("a column given under two spellings") {
        const parse_error e = read_error("Type,OP Type,Accelerator Core,Duration(us)\n");
        CHECK(std::string(e.what()).find("given twice") != std::string::npos);
    }
    SUBCASE("empty file") {
        CHECK(std::string(read_error("").what()).find("empty file") != std::string::npos);
        CHECK(parse_kernel_details(head).rows.empty());  // a header alone is fine
    }
}

TEST_CASE("kernel_details: the header again (two tables joined) is a skipped row, not data") {
    const std::string head = "Type,Accelerator Core,Duration(us)\n";
    const kernel_table t =
        parse_kernel_details(head + "A,AI_CORE,1\n" + head + "B,AI_CORE,2\n", "joined.csv");
    REQUIRE(t.rows.size() == 2);
    REQUIRE(t.skipped.size() == 1);
    CHECK(t.skipped[0].line == 3);
    CHECK(t.skipped[0].column == 0);
    CHECK(t.skipped[0].reason == "the header again (tables joined?)");
    // Strict: the error, at that line.
    const parse_error e = read_error(head + "A,AI_CORE,1\n" + head);
    CHECK(e.line() == 3);
    CHECK(std::string(e.what()).find("the header again (tables joined?)") != std::string::npos);
}

TEST_CASE("kernel_details: HF32 Eligible is YES or NO; anything else skips the row") {
    const std::string text =
        "Type,Accelerator Core,Duration(us),HF32 Eligible\nA,AI_CORE,1,YES\nB,AI_CORE,2,no\n"
        "C,AI_CORE,3,N/A\nD,AI_CORE,4,MAYBE\n";
    const kernel_table t = parse_kernel_details(text, "k.csv");
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].hf32_eligible == true);
    CHECK(t.rows[1].hf32_eligible == false);
    CHECK(!t.rows[2].hf32_eligible.has_value());
    REQUIRE(t.skipped.size() == 1);
    CHECK(t.skipped[0].line == 5);
    CHECK(t.skipped[0].reason.find("YES or NO") != std::string::npos);
}

TEST_CASE("kernel_details: damaged rows are skipped, each with its line and reason") {
    const std::string head = "Type,Accelerator Core,Duration(us),Block Dim\n";
    // Line 3 is ragged (3 of 4 fields, as a real CANN 7.0-era kernel_details has one line of 31
    // fields where the header has 32), line 4 has text for a duration, line 6 a negative count.
    const std::string text = head + "A,AI_CORE,1,1\nB,AI_CORE,2\nC,AI_CORE,fast,1\n" +
                             "D,AI_VECTOR_CORE,4,2\nE,AI_CORE,5,-3\nF,AI_CORE,6,4\n";
    const kernel_table t = parse_kernel_details(text, "k.csv");
    REQUIRE(t.rows.size() == 3);
    CHECK(t.rows[0].op_type == "A");
    CHECK(t.rows[1].op_type == "D");
    CHECK(t.rows[2].op_type == "F");
    REQUIRE(t.skipped_count == 3);
    REQUIRE(t.skipped.size() == 3);
    CHECK(t.skipped[0].line == 3);
    CHECK(t.skipped[0].column == 0);
    CHECK(t.skipped[0].reason == "3 fields where the header has 4");
    CHECK(t.skipped[0].excerpt == "B,AI_CORE,2");  // fields with their separators
    CHECK(t.skipped[1].line == 4);
    CHECK(t.skipped[1].column == 11);
    CHECK(t.skipped[1].reason == "not a number in column 'Duration(us)': \"fast\"");
    CHECK(t.skipped[2].line == 6);
    CHECK(t.skipped[2].reason.find("negative count in column 'Block Dim'") == 0);
    CHECK(describe(t.skipped[1]) ==
          "k.csv:4:11: not a number in column 'Duration(us)': \"fast\": "
          "\"C,AI_CORE,fast,1\"");

    SUBCASE("strict: the first damaged row is the error, with the fields and separators") {
        const parse_error e = read_error(text);
        CHECK(e.line() == 3);
        CHECK(e.text() == "B,AI_CORE,2");
        CHECK(std::string(e.what()).find("3 fields where the header has 4") != std::string::npos);
    }
    SUBCASE("the list stops at max_skipped_listed; the count does not") {
        std::string many = head;
        for (int i = 0; i < 50; ++i) many += "X,AI_CORE\n";
        kernel_reader_options o;
        o.max_skipped_listed = 10;
        const kernel_table m = parse_kernel_details(many, "m.csv", o);
        CHECK(m.rows.empty());
        CHECK(m.skipped.size() == 10);
        CHECK(m.skipped_count == 50);
    }
    SUBCASE("damage to the file's structure stays an error") {
        CHECK_THROWS_AS((void)parse_kernel_details(head + "A,AI_CORE,\"1\"x,1\n"), parse_error);
        CHECK_THROWS_AS((void)parse_kernel_details(head + "A,AI_CORE,\"1,1\n"), parse_error);
    }
}

TEST_CASE("kernel_details: a required column without its value skips the row, never a 0") {
    const std::string text =
        "Type,Accelerator Core,Duration(us)\n"
        "A,AI_CORE,1\nB,AI_CORE,\nC,AI_CORE,N/A\n,AI_CORE,4\nE,AI_CORE,5\n";
    const kernel_table t = parse_kernel_details(text, "k.csv");
    REQUIRE(t.rows.size() == 2);
    CHECK(t.rows[0].op_type == "A");
    CHECK(t.rows[1].op_type == "E");
    REQUIRE(t.skipped.size() == 3);
    CHECK(t.skipped[0].line == 3);
    CHECK(t.skipped[0].reason == "no duration (empty or N/A) in column 'Duration(us)': \"\"");
    CHECK(t.skipped[1].line == 4);
    CHECK(t.skipped[1].reason == "no duration (empty or N/A) in column 'Duration(us)': \"N/A\"");
    CHECK(t.skipped[2].line == 5);
    CHECK(t.skipped[2].reason == "no op type in column 'Type': \"\"");
    // A share past 1, a percentage past 100: damage, not a compute-bound op.
    const kernel_table u = parse_kernel_details(
        "Type,Accelerator Core,Duration(us),aic_mac_ratio,cube_utilization(%)\n"
        "A,AI_CORE,1,1,100\nB,AI_CORE,2,7.5,50\nC,AI_CORE,3,0.5,1e9\n",
        "r.csv");
    REQUIRE(u.rows.size() == 1);
    CHECK(u.rows[0].aic_mac_ratio == 1.0);  // the edges are shares
    REQUIRE(u.skipped.size() == 2);
    CHECK(u.skipped[0].reason == "a share above 1 in column 'aic_mac_ratio': \"7.5\"");
    CHECK(u.skipped[1].reason == "a percentage above 100 in column 'cube_utilization(%)': \"1e9\"");
}

TEST_CASE("kernel_details: the engine comes from the cycle counters when the label disagrees") {
    // CANN 7.0-era torch_npu labels vector ops AI_CORE with aic_total_cycles 0.
    const std::string text =
        "Type,Accelerator Core,Duration(us),aic_total_cycles,aiv_total_cycles\n"
        "Add,AI_CORE,3,0,5000\n"         // vector op under the cube label
        "MatMul,AI_CORE,9,12000,0\n"     // a cube op: the label agrees
        "Cast,AI_VECTOR_CORE,2,700,0\n"  // the reverse disagreement
        "Mul,AI_CORE,1,0,0\n"            // no cycles at all: the label stands
        "Sub,AI_CORE,1,N/A,300\n";       // one counter not recorded: the label stands
    const kernel_table t = parse_kernel_details(text, "e.csv");
    REQUIRE(t.rows.size() == 5);
    CHECK(t.rows[0].task == task_type::ai_vector_core);
    CHECK(t.rows[0].task_text == "AI_CORE");  // kept as written
    REQUIRE(t.rows[0].has_note(note_kind::engine_from_cycles));
    CHECK(t.rows[0].notes.back().detail ==
          "labelled AI_CORE, aic_total_cycles 0, aiv_total_cycles 5000: read as AI_VECTOR_CORE");
    CHECK(t.rows[1].task == task_type::ai_core);
    CHECK_FALSE(t.rows[1].has_note(note_kind::engine_from_cycles));
    CHECK(t.rows[2].task == task_type::ai_core);
    CHECK(t.rows[2].has_note(note_kind::engine_from_cycles));
    CHECK(t.rows[3].task == task_type::ai_core);
    CHECK(t.rows[4].task == task_type::ai_core);
}

TEST_CASE("kernel_details: Device_id: one device chosen, several refused unless asked for") {
    const std::string text =
        "Device_id,OP Type,Task Type,Task Duration(us)\n"
        "0,Add,AI_CORE,1\n1,Add,AI_CORE,2\n0,Mul,AI_CORE,3\n";
    const parse_error e = read_error(text);
    const std::string w = e.what();
    CHECK(w.find("rows of 2 devices (device 0: 2 rows, device 1: 1 rows)") != std::string::npos);
    CHECK(w.find("--device") != std::string::npos);

    kernel_reader_options o;
    o.device = 1;
    const kernel_table one = parse_kernel_details(text, "d.csv", o);
    REQUIRE(one.rows.size() == 1);
    CHECK(one.rows[0].device == 1);
    CHECK(one.rows[0].task_duration->in(units::us) == 2.0);

    o.device = 7;
    CHECK_THROWS_WITH_AS((void)parse_kernel_details(text, "d.csv", o),
                         doctest::Contains("no row of device 7"), parse_error);

    kernel_reader_options all;
    all.several_devices = true;
    CHECK(parse_kernel_details(text, "d.csv", all).rows.size() == 3);

    // A file without the column has no device to pick: asking for one is an error (it was
    // ignored, every row read as that device's), unless the file's folder names the device.
    const std::string no_column = "OP Type,Task Type,Task Duration(us)\nAdd,AI_CORE,1\n";
    kernel_reader_options seven;
    seven.device = 7;
    CHECK_THROWS_WITH_AS(
        (void)parse_kernel_details(no_column, "k.csv", seven),
        doctest::Contains("device 7 asked for, but the table has no Device_id column to pick its "
                          "rows by"),
        parse_error);
    seven.source_device = 3;  // in device_3's folder: another device's table
    CHECK_THROWS_WITH_AS((void)parse_kernel_details(no_column, "k.csv", seven),
                         doctest::Contains("device 7 asked for, but the table is device 3's (its "
                                           "folder device_3) and has no Device_id column"),
                         parse_error);
    seven.source_device = 7;
    CHECK(parse_kernel_details(no_column, "k.csv", seven).rows.size() == 1);
}

TEST_CASE("kernel_details: invalid UTF-8 in text fields passes through") {
    const std::string name = "op\xFF\xFE";
    const kernel_table t = parse_kernel_details("Name,Type,Accelerator Core,Duration(us)\n" + name +
                                                ",T\xC3,AI_CORE,1\n");
    REQUIRE(t.rows.size() == 1);
    CHECK(t.rows[0].name == name);
    CHECK(t.rows[0].op_type == "T\xC3");
}

TEST_CASE("kernel_details: 100k generated rows stream in constant memory") {
    // Rows are generated in memory and read through the streaming reader; the check is exact
    // (count, sum of block dims). 100k rows: about 1 s in a -O0 build (the million-row case is
    // in test_csv.cpp, on the CSV layer alone).
    constexpr int n = 100'000;
    std::string text =
        "Type,Accelerator Core,Duration(us),Block Dim,Input Shapes,Input Data Types,"
        "Output Shapes,Output Data Types\n";
    for (int i = 0; i < n; ++i) {
        text += "Add,AI_VECTOR_CORE,1.5,";
        text += std::to_string(i % 48 + 1);
        text += ",\"512,2,4096;512,2,4096\",FLOAT;FLOAT,\"512,2,4096\",FLOAT\n";
    }
    std::istringstream in(text);
    long long blocks = 0;
    int rows = 0;
    (void)for_each_kernel_row(in, "gen", [&](const kernel_row& r) {
        blocks += *r.block_dim;
        ++rows;
    });
    CHECK(rows == n);
    // sum over i of (i % 48 + 1): 2083 full cycles of 1..48 (1176 each) + 1..16 (136).
    CHECK(blocks == 2083LL * 1176 + 136);
}

TEST_CASE("pcie: the msprof pcie_*.csv layout") {
    std::istringstream in(
        "Device_id,Mode,Min,Max,Avg\n"
        "0,Tx_p_avg(MB/s),10.5,200.25,99.628\n"
        "0,Tx_np_avg(MB/s),0,1,0.5\n"
        "0,Tx_cpl_avg(MB/s),N/A,N/A,N/A\n"
        "0,Tx_latency_avg(us),1,3,2\n"
        "0,Rx_p_avg(MB/s),1,2,1.5\n"
        "0,Rx_np_avg(MB/s),1,2,1.5\n"
        "0,Rx_cpl_avg(MB/s),1,2,1.5\n"
        "0,Future_metric(x),1,2,3\n"
        "1,Tx_p_avg(MB/s),1,2,3\n");
    const pcie_profile p = read_pcie(in, "pcie_0.csv");
    REQUIRE(p.devices.size() == 2);
    const pcie_device* d = p.find(0);
    REQUIRE(d != nullptr);
    CHECK(d->tx_posted.avg->in(units::MBps) == 99.628);  // guide §4's measured example
    CHECK(d->tx_posted.max->in(units::MBps) == 200.25);
    CHECK_FALSE(d->tx_completion.recorded());
    CHECK(d->tx_latency.avg->in(units::us) == 2.0);
    CHECK(p.find(1)->tx_posted.avg->in(units::MBps) == 3.0);
    CHECK(p.find(7) == nullptr);

    std::istringstream bad_unit("Device_id,Mode,Min,Max,Avg\n0,Tx_p_avg(GB/s),1,2,3\n");
    CHECK_THROWS_AS((void)read_pcie(bad_unit), parse_error);
    std::istringstream bad_num("Device_id,Mode,Min,Max,Avg\n0,Tx_p_avg(MB/s),1,x,3\n");
    try {
        (void)read_pcie(bad_num, "p.csv");
        FAIL("expected a parse_error");
    } catch (const parse_error& e) {
        CHECK(e.line() == 2);
        CHECK(e.text() == "x");
    }
    std::istringstream bad_head("Device,Mode\n");
    CHECK_THROWS_AS((void)read_pcie(bad_head), parse_error);
}

}  // namespace test_kernel_details
