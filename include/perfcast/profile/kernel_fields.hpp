// perfcast/profile/kernel_fields.hpp: the fields of a profile row that need more than a
// number: timestamps in exact nanoseconds, tensor shapes, dtypes and formats, and the checks
// that need the whole row (check_row: tensor counts, unknown dtypes, MatMul shapes;
// engine_from_cycles). Plain fields (trim, numbers, N/A) are read by io/parse.hpp.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../dtype.hpp"
#include "../io/parse.hpp"
#include "../node.hpp"
#include "../units.hpp"
#include "kernel_row.hpp"

namespace perfcast::profile {

namespace detail {

// Field scanning shared with the other text formats: io/parse.hpp.
using io::blank;
using io::iequals;
using io::not_recorded;
using io::number_status;
using io::parse_double;
using io::split;
using io::trim;

/// Strips one pair of enclosing double quotes: torch_npu writes shapes as """8,4;2""", which
/// CSV unquoting turns into "8,4;2".
[[nodiscard]] constexpr std::string_view strip_inner_quotes(std::string_view s) noexcept {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    return s;
}

/// "1736413971558972.912" microseconds -> integer nanoseconds, exactly (digits beyond the
/// nanosecond are rounded half up). Only digits and one '.'.
[[nodiscard]] inline bool parse_timestamp_us(std::string_view s, std::int64_t& ns) noexcept {
    if (s.empty()) return false;
    const auto dot = s.find('.');
    const std::string_view ip = s.substr(0, dot);
    const std::string_view fp =
        dot == std::string_view::npos ? std::string_view{} : s.substr(dot + 1);
    if (ip.empty() && fp.empty()) return false;
    constexpr std::int64_t max_us = std::numeric_limits<std::int64_t>::max() / 1000 - 1;
    std::int64_t us = 0;
    for (char c : ip) {
        if (c < '0' || c > '9') return false;
        if (us > (max_us - (c - '0')) / 10) return false;
        us = us * 10 + (c - '0');
    }
    std::int64_t frac = 0;
    int digits = 0;
    bool round_up = false;
    for (char c : fp) {
        if (c < '0' || c > '9') return false;
        if (digits < 3) {
            frac = frac * 10 + (c - '0');
            ++digits;
        } else if (digits == 3) {
            round_up = c >= '5';
            ++digits;
        }
    }
    while (digits < 3) {
        frac *= 10;
        ++digits;
    }
    ns = us * 1000 + frac + (round_up ? 1 : 0);
    return true;
}

/// "81920,4096;8192,512" -> two shapes; "" -> one scalar; ";" -> two scalars.
/// False (and `out` empty) when a dimension is not a non-negative integer. Reuses `out`'s
/// storage: a streaming reader parses millions of these.
[[nodiscard]] inline bool parse_shapes(std::string_view field, std::vector<tensor_shape>& out) {
    bool ok = true;
    std::size_t n = 0;
    split(field, ';', [&](std::string_view t) {
        if (n == out.size()) out.emplace_back();
        std::vector<std::int64_t>& dims = out[n++].dims;
        dims.clear();
        t = trim(t);
        if (t.empty()) return;
        split(t, ',', [&](std::string_view d) {
            d = trim(d);
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
            if (d.empty() || ec != std::errc{} || ptr != d.data() + d.size() || v < 0) ok = false;
            dims.push_back(v);
        });
    });
    out.resize(ok ? n : 0);
    return ok;
}

/// "DT_BF16;DT_BF16" -> two dtypes; unknown spellings are kept with an empty `type`.
inline void parse_dtypes(std::string_view field, std::vector<tensor_dtype>& out) {
    std::size_t n = 0;
    split(field, ';', [&](std::string_view t) {
        t = trim(t);
        if (n == out.size()) out.emplace_back();
        tensor_dtype& d = out[n++];
        d.text.assign(t);
        d.type = try_parse_dtype(t);
    });
    out.resize(n);
}

inline void parse_formats(std::string_view field, std::vector<std::string>& out) {
    std::size_t n = 0;
    split(field, ';', [&](std::string_view t) {
        if (n == out.size()) out.emplace_back();
        out[n++].assign(trim(t));
    });
    out.resize(n);
}

/// Whether op type `t` is a matrix multiply: one of op_kinds' matmul row's profiler types.
[[nodiscard]] constexpr bool is_matmul_type(std::string_view t) noexcept {
    const op_row* r = row_for_profiler_type(op_kinds, t);
    return r != nullptr && r->value == op_kind::matmul;
}

/// Whether A x B -> C holds with A as [M,K] or [K,M] and B as [K,N] or [N,K] (leading batch
/// dimensions broadcast). Nothing to check (true) when a tensor has rank < 2.
[[nodiscard]] inline bool matmul_shapes_agree(const tensor_shape& a, const tensor_shape& b,
                                              const tensor_shape& c) noexcept {
    if (a.rank() < 2 || b.rank() < 2 || c.rank() < 2) return true;
    const auto at = [](const tensor_shape& s, std::size_t from_end) {
        return s.dims[s.rank() - 1 - from_end];
    };
    // Batch dimensions, aligned from the right: each of A's and B's is 1 or C's.
    const std::size_t cb = c.rank() - 2;
    const std::size_t ab = a.rank() - 2;
    const std::size_t bb = b.rank() - 2;
    if (ab > cb || bb > cb) return false;
    for (std::size_t i = 0; i < cb; ++i) {
        const std::int64_t cd = c.dims[cb - 1 - i];
        const std::int64_t ad = i < ab ? a.dims[ab - 1 - i] : 1;
        const std::int64_t bd = i < bb ? b.dims[bb - 1 - i] : 1;
        if ((ad != 1 && ad != cd) || (bd != 1 && bd != cd)) return false;
        if (ad != cd && bd != cd && cd != 1) return false;
    }
    const std::int64_t m = at(c, 1);
    const std::int64_t n = at(c, 0);
    for (int ta = 0; ta < 2; ++ta) {
        for (int tb = 0; tb < 2; ++tb) {
            const std::int64_t am = ta ? at(a, 0) : at(a, 1);
            const std::int64_t ak = ta ? at(a, 1) : at(a, 0);
            const std::int64_t bk = tb ? at(b, 0) : at(b, 1);
            const std::int64_t bn = tb ? at(b, 1) : at(b, 0);
            if (am == m && bn == n && ak == bk) return true;
        }
    }
    return false;
}

}  // namespace detail

/// Adds the notes that need the whole row: tensor counts, unknown dtypes, MatMul shapes.
inline void check_row(kernel_row& row, bool check_matmul_shapes = true) {
    const auto count_check = [&row](const std::vector<tensor_shape>& s,
                                    const std::vector<tensor_dtype>& t, std::string_view what) {
        if (!s.empty() && !t.empty() && s.size() != t.size()) {
            row.notes.push_back({note_kind::tensor_count_mismatch,
                                 std::string(what) + ": " + std::to_string(s.size()) + " shapes, " +
                                     std::to_string(t.size()) + " dtypes"});
        }
    };
    count_check(row.input_shapes, row.input_types, "inputs");
    count_check(row.output_shapes, row.output_types, "outputs");
    for (const auto* list : {&row.input_types, &row.output_types}) {
        for (const tensor_dtype& t : *list) {
            if (t.unknown_spelling()) {
                row.notes.push_back({note_kind::unknown_dtype, t.text});
            }
        }
    }
    if (check_matmul_shapes && detail::is_matmul_type(row.op_type) &&
        row.input_shapes.size() >= 2 && !row.output_shapes.empty() &&
        !detail::matmul_shapes_agree(row.input_shapes[0], row.input_shapes[1],
                                     row.output_shapes[0])) {
        row.notes.push_back({note_kind::shape_conflict, "inputs " + to_string(row.input_shapes[0]) +
                                                            " x " + to_string(row.input_shapes[1]) +
                                                            " cannot give " +
                                                            to_string(row.output_shapes[0]) +
                                                            " with either input transposed"});
    }
}

/// The label against the cycle counters: a task with cycles on one engine only ran there (a CANN
/// 7.0-era kernel_details labels vector ops AI_CORE with aic_total_cycles 0 and aiv_total_cycles
/// > 0). Changes `row.task` and adds note `engine_from_cycles`; every reader calls it once per
/// row, after the counters are read.
inline void engine_from_cycles(kernel_row& row) {
    if (!row.aic_total_cycles || !row.aiv_total_cycles) return;
    const double aic = row.aic_total_cycles->in(units::cycle);
    const double aiv = row.aiv_total_cycles->in(units::cycle);
    task_type t = row.task;
    if (row.task == task_type::ai_core && aic == 0 && aiv > 0) t = task_type::ai_vector_core;
    if (row.task == task_type::ai_vector_core && aiv == 0 && aic > 0) t = task_type::ai_core;
    if (t == row.task) return;
    const auto whole = [](double v) {
        char buf[32];
        const int n = std::snprintf(buf, sizeof buf, "%.0f", v);  // whole cycles, any size
        return n > 0 && static_cast<std::size_t>(n) < sizeof buf
                   ? std::string(buf, static_cast<std::size_t>(n))
                   : std::string("(huge)");
    };
    row.notes.push_back(
        {note_kind::engine_from_cycles, "labelled " + row.task_text + ", aic_total_cycles " +
                                            whole(aic) + ", aiv_total_cycles " + whole(aiv) +
                                            ": read as " + std::string(name_of(t))});
    row.task = t;
}

}  // namespace perfcast::profile
