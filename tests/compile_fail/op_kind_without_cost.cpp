// An op kind without a cost function must not make a vocabulary: with_rows validates its rows
// (validate(op_vocabulary)), and in constant evaluation a failed check does not compile.
// Negative test; see cmake/PerfcastCompileFail.cmake.
#include <perfcast/node.hpp>

namespace {
constexpr perfcast::op_row with_cost{.value = perfcast::first_extension_kind,
                                     .name = "scan",
                                     .eng = perfcast::engine::vector,
                                     .shapes = {1, 1, "one shape"},
                                     .cost = perfcast::detail::reduce_at};
[[maybe_unused]] constexpr perfcast::op_row without_cost{.value = perfcast::first_extension_kind,
                                                         .name = "scan",
                                                         .eng = perfcast::engine::vector,
                                                         .shapes = {1, 1, "one shape"}};
}  // namespace

int main() {
    [[maybe_unused]] constexpr auto ok = perfcast::with_rows(perfcast::op_kinds, with_cost);
#if PERFCAST_COMPILE_FAIL
    [[maybe_unused]] constexpr auto bad = perfcast::with_rows(perfcast::op_kinds, without_cost);
#endif
}
