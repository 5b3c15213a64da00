// libFuzzer target: the CSV reader and the kernel_details reader on arbitrary bytes, and the
// rows they give through the sequence context and the model.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_csv.cpp -o fuzz_csv
//   ./fuzz_csv -max_total_time=60 tests/fuzz/corpus/csv
//
// Any input must either parse or throw perfcast::error (parse_error derives from it); a crash,
// a sanitizer report, a hang or another exception type is a finding. A small record limit keeps
// the "record too long" path reachable.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include <perfcast/chips.hpp>
#include <perfcast/profile/context.hpp>
#include <perfcast/profile/csv.hpp>
#include <perfcast/profile/kernel_details.hpp>
#include <perfcast/profile/report.hpp>
#include <perfcast/profile/validate.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    perfcast::profile::csv_options opt;
    opt.max_record_bytes = 4096;
    // 1. Plain CSV from memory, without the field-count check so that deeper states are reached.
    try {
        opt.check_field_count = false;
        perfcast::profile::csv_reader r(text, "fuzz", opt);
        std::size_t fields = 0;
        while (r.next()) fields += r.record().size();
        (void)fields;
    } catch (const perfcast::error&) {
    }
    // 2. Through a stream with a tiny buffer: every chunk boundary, with the field-count check.
    try {
        opt.check_field_count = true;
        opt.buffer_bytes = 7;
        std::istringstream in{std::string(text)};
        perfcast::profile::csv_reader r(in, "fuzz", opt);
        while (r.next()) {
        }
    } catch (const perfcast::error&) {
    }
    // 3. As a profile, all the way to the report.
    try {
        perfcast::profile::kernel_reader_options kopt;
        kopt.csv.max_record_bytes = 4096;
        std::istringstream in{std::string(text)};
        (void)perfcast::profile::build_report(in, "fuzz", perfcast::chips::ascend910b3, {}, kopt);
    } catch (const perfcast::error&) {
    }
    // 4. As rows: their sequence context, then every row predicted (what validate does).
    try {
        perfcast::profile::kernel_reader_options kopt;
        kopt.csv.max_record_bytes = 4096;
        std::istringstream in{std::string(text)};
        auto rows = perfcast::profile::read_kernel_details(in, "fuzz", kopt).rows;
        perfcast::profile::annotate_context(rows, perfcast::chips::ascend910b1);
        (void)perfcast::profile::score_rows(perfcast::chips::ascend910b1, rows);
    } catch (const perfcast::error&) {
    }
    return 0;
}
