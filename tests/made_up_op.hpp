// tests/made_up_op.hpp: a made-up op kind, added the way an extension adds one: an op_kind from
// first_extension_kind, ONE row and ONE cost function. Nothing under include/ or examples/ knows
// it; test_op_vocabulary.cpp shows that the model file, `perfcast op` and the profile mapping all
// see it through the vocabulary below.
#pragma once

#include <cstdint>

#include <perfcast/node.hpp>
#include <perfcast/op.hpp>
#include <perfcast/op_vocabulary.hpp>

namespace perfcast_test {

/// "scan": an inclusive prefix sum along the last axis (CumSum), rows in parallel.
inline constexpr perfcast::op_kind scan_kind = perfcast::first_extension_kind;

/// Its cost function: one add per element, every element read and written once, one work unit
/// per row (a row's sum is sequential).
constexpr perfcast::op scan_cost(const perfcast::node& n, std::int64_t /*batch*/,
                                 const perfcast::shape& s) {
    const std::int64_t elements = s.elements("scan elements");
    const std::int64_t length = s.inner();
    perfcast::op o;
    o.kind = scan_kind;
    o.type = n.type;
    o.out_type = n.type;
    o.useful_ops = static_cast<double>(elements);
    o.work_units = elements / length;
    o.ops_per_unit = static_cast<double>(length);
    o.bytes_read = static_cast<double>(elements) * perfcast::size_of(n.type);
    o.bytes_written = o.bytes_read;
    o.run = static_cast<double>(length) * perfcast::size_of(n.type);
    return o;
}

/// Its row: name, model-file keyword, engine, traits, shapes, profiler types, cost function
/// (op_vocabulary.hpp says what each holds).
inline constexpr perfcast::op_row scan_row{
    .value = scan_kind,
    .name = "scan",
    .keywords = {"scan"},
    .eng = perfcast::engine::vector,
    .traits = {},
    .shapes = {.min = 1, .max = 1, .form = "one shape ROWS,LENGTH (scanned along the last axis)"},
    .profiler_types = {"Cumsum"},
    .cost = scan_cost,
};

/// The library's kinds and scan.
inline constexpr auto ops_with_scan = perfcast::with_rows(perfcast::op_kinds, scan_row);

}  // namespace perfcast_test
