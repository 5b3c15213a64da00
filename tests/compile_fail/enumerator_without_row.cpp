// An enumerator added without its row in the enum's table must not compile: covers_enum (the
// check every table of perfcast has, op_kinds included) sees that the value after the table's
// last row names an enumerator. Negative test; see cmake/PerfcastCompileFail.cmake.
#include <array>

#include <perfcast/enum_table.hpp>

namespace {
enum class color : unsigned char {
    red,
    green,
#if PERFCAST_COMPILE_FAIL
    blue,  // new, and no row below
#endif
};
constexpr std::array<perfcast::enum_entry<color>, 2> color_names{
    {{color::red, "red"}, {color::green, "green"}}};
static_assert(perfcast::covers_enum<color_names>());
}  // namespace

int main() {}
