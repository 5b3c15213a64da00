// libFuzzer target: read_msprof_db (perfcast/profile/msprof_db.hpp) on an in-memory database
// built from the fuzz bytes, then the rows through the report, as the command does.
//
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude \
//       tests/fuzz/fuzz_msprof_db.cpp -o fuzz_msprof_db
//   ./fuzz_msprof_db -max_total_time=60 tests/fuzz/corpus/msprof_db
//
// The bytes are a small program (the seeds in corpus/msprof_db were written from the real
// exports of tests/data/profiles/real by tests/fuzz/msprof_db_seed.py, which documents the
// same format):
//   byte 0   options: bit 0 strict, bit 1 several_devices, bit 2 --device 0, bits 3-5 the
//            table whose column byte 1 drops
//   byte 1   index of the column to drop from that table (>= its column count: none)
//   then rows: a table byte (its value mod 6: STRING_IDS, COMPUTE_TASK_INFO, TASK,
//            TASK_PMU_INFO, NPU_INFO, AICORE_FREQ; a table exists once a row names it) and one
//            cell per column: a kind byte (mod 6: 0 NULL, 1 one-byte signed integer, 2 eight-byte
//            integer, 3 eight-byte double, 4 text, 5 blob; text and blob: a length byte, then
//            the bytes). A row cut short by the end of the input is dropped.
// Any input must read or throw perfcast::error; the rows must come out in start order with
// non-negative durations; a crash, a sanitizer report or another exception is a finding.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <perfcast/chips.hpp>
#include <perfcast/profile/msprof_db.hpp>
#include <perfcast/profile/report.hpp>

namespace {

using perfcast::profile::db_value;

struct table_shape {
    std::string_view name;
    std::vector<std::string> columns;
};

// The real torch_npu export's columns (ascend_pytorch_profiler_0.db), attrInfo included.
const table_shape shapes[6] = {
    {"STRING_IDS", {"id", "value"}},
    {"COMPUTE_TASK_INFO",
     {"name", "globalTaskId", "blockDim", "mixBlockDim", "taskType", "opType", "inputFormats",
      "inputDataTypes", "inputShapes", "outputFormats", "outputDataTypes", "outputShapes",
      "attrInfo", "waitNs"}},
    {"TASK",
     {"startNs", "endNs", "deviceId", "connectionId", "globalTaskId", "globalPid", "taskType",
      "contextId", "streamId", "taskId", "modelId"}},
    {"TASK_PMU_INFO", {"globalTaskId", "name", "value"}},
    {"NPU_INFO", {"id", "name"}},
    {"AICORE_FREQ", {"deviceId", "timestampNs", "freq"}},
};

class bytes {
public:
    bytes(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
    [[nodiscard]] bool empty() const noexcept { return i_ >= n_; }
    bool take(std::uint8_t& b) {
        if (i_ >= n_) return false;
        b = d_[i_++];
        return true;
    }
    bool take(void* out, std::size_t k) {
        if (n_ - i_ < k) return false;
        std::memcpy(out, d_ + i_, k);
        i_ += k;
        return true;
    }

private:
    const std::uint8_t* d_;
    std::size_t n_;
    std::size_t i_ = 0;
};

bool cell(bytes& in, db_value& v) {
    std::uint8_t kind = 0;
    if (!in.take(kind)) return false;
    v = db_value{};
    switch (kind % 6) {
        case 0: return true;
        case 1: {
            std::uint8_t b = 0;
            if (!in.take(b)) return false;
            v = db_value::of(static_cast<std::int64_t>(static_cast<std::int8_t>(b)));
            return true;
        }
        case 2: {
            std::int64_t x = 0;
            if (!in.take(&x, sizeof x)) return false;
            v = db_value::of(x);
            return true;
        }
        case 3: {
            double x = 0;
            if (!in.take(&x, sizeof x)) return false;
            v = db_value::of(x);
            return true;
        }
        default: {
            std::uint8_t len = 0;
            if (!in.take(len)) return false;
            std::string s(len, '\0');
            if (len != 0 && !in.take(s.data(), len)) return false;
            v = db_value::of(std::string_view(s));
            if (kind % 6 == 5) v.type = db_value::kind::blob;
            return true;
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    bytes in(data, size);
    std::uint8_t options = 0;
    std::uint8_t drop = 0xFF;
    (void)in.take(options);
    (void)in.take(drop);
    const std::size_t drop_table = (options >> 3) % 6;

    perfcast::profile::memory_db_source db("fuzz.db");
    std::vector<perfcast::profile::memory_db_source::table*> tables(6, nullptr);
    while (!in.empty()) {
        std::uint8_t which = 0;
        if (!in.take(which)) break;
        const std::size_t t = which % 6;
        if (tables[t] == nullptr) {
            std::vector<std::string> cols = shapes[t].columns;
            if (t == drop_table && drop < cols.size()) {
                cols.erase(cols.begin() + drop);
            }
            tables[t] = &db.add(std::string(shapes[t].name), cols);
        }
        std::vector<db_value> row(tables[t]->columns.size());
        bool whole = true;
        for (auto& v : row) {
            if (!cell(in, v)) {
                whole = false;
                break;
            }
        }
        if (!whole) break;
        tables[t]->rows.push_back(std::move(row));
    }

    perfcast::profile::kernel_reader_options opt;
    opt.strict = (options & 1) != 0;
    opt.several_devices = (options & 2) != 0;
    if ((options & 4) != 0) opt.device = 0;
    opt.max_skipped_listed = 8;
    try {
        const auto out = perfcast::profile::read_msprof_db(db, opt);
        const auto& rows = out.table.rows;
        if (out.table.skipped.size() > opt.max_skipped_listed ||
            out.table.skipped.size() > out.table.skipped_count) {
            __builtin_trap();
        }
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (!rows[i].start || !rows[i].task_duration || rows[i].task_duration->base_value() < 0)
                __builtin_trap();
            if (i > 0 && *rows[i].start < *rows[i - 1].start) __builtin_trap();
        }
        (void)perfcast::profile::db_chip_evidence(out.info);
        perfcast::profile::report_builder b(perfcast::chips::ascend910b2);
        for (const auto& r : rows) b.add(r);
        (void)b.finish("fuzz.db", "msprof SQLite export");
    } catch (const perfcast::error&) {
    }
    return 0;
}
