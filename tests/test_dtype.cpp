// dtype: sizes, cube fractals, profiler spellings, and the unknown-name error.
#include <doctest/doctest.h>

#include <perfcast/dtype.hpp>

#include <set>
#include <string>
#include <string_view>

// One namespace per test file: the build compiles test files together (unity), so a
// file's helpers and using-directives stay its own.
namespace test_dtype {

namespace {

using namespace perfcast;
using namespace perfcast::literals;

static_assert(size_of(dtype::fp16) == 2_B);
static_assert(parse_dtype("DT_BF16") == dtype::bf16);
static_assert(cube_fractal(dtype::int8).k == 32);
static_assert(dtype_count == all_dtypes.size());

}  // namespace

TEST_CASE("dtype: element sizes") {
    CHECK(size_of(dtype::fp32).in(units::B) == 4.0);
    CHECK(size_of(dtype::hf32).in(units::B) == 4.0);  // fp32 storage
    CHECK(size_of(dtype::fp16).in(units::B) == 2.0);
    CHECK(size_of(dtype::bf16).in(units::B) == 2.0);
    CHECK(size_of(dtype::fp64).in(units::B) == 8.0);
    CHECK(size_of(dtype::int8).in(units::B) == 1.0);
    CHECK(size_of(dtype::uint8).in(units::B) == 1.0);
    CHECK(size_of(dtype::int16).in(units::B) == 2.0);
    CHECK(size_of(dtype::uint16).in(units::B) == 2.0);
    CHECK(size_of(dtype::int32).in(units::B) == 4.0);
    CHECK(size_of(dtype::uint32).in(units::B) == 4.0);
    CHECK(size_of(dtype::int64).in(units::B) == 8.0);
    CHECK(size_of(dtype::uint64).in(units::B) == 8.0);
    CHECK(size_of(dtype::bool_).in(units::B) == 1.0);
}

TEST_CASE("dtype: index_of is a dense index and names are distinct") {
    std::set<std::string_view> names;
    for (std::size_t i = 0; i < all_dtypes.size(); ++i) {
        CHECK(index_of(all_dtypes[i]) == i);
        names.insert(name_of(all_dtypes[i]));
        // Every short name parses back to its dtype.
        CHECK(parse_dtype(name_of(all_dtypes[i])) == all_dtypes[i]);
    }
    CHECK(names.size() == dtype_count);
}

TEST_CASE("dtype: cube fractals ([DtypeMKN] of the CANN ini files)") {
    const fractal_shape f16 = cube_fractal(dtype::fp16);
    CHECK(f16.m == 16);
    CHECK(f16.k == 16);
    CHECK(f16.n == 16);
    CHECK(f16.macs() == 4096);
    CHECK(cube_fractal(dtype::bf16).macs() == 4096);
    const fractal_shape i8 = cube_fractal(dtype::int8);
    CHECK(i8.m == 16);
    CHECK(i8.k == 32);
    CHECK(i8.n == 16);
    CHECK(i8.macs() == 8192);
    CHECK(cube_fractal(dtype::uint8).k == 32);
    CHECK(cube_fractal(dtype::fp32).k == 8);
    CHECK(cube_fractal(dtype::hf32).k == 8);
}

TEST_CASE("dtype: vector slow paths") {
    CHECK(vector_native(dtype::fp16));
    CHECK(vector_native(dtype::int32));
    CHECK_FALSE(vector_native(dtype::int64));
    CHECK_FALSE(vector_native(dtype::uint64));
    CHECK_FALSE(vector_native(dtype::fp64));
    CHECK(is_integer(dtype::int64));
    CHECK(is_integer(dtype::bool_));
    CHECK_FALSE(is_integer(dtype::bf16));
}

TEST_CASE("dtype: profiler spellings (msprof op_summary, torch_npu kernel_details)") {
    CHECK(parse_dtype("DT_BF16") == dtype::bf16);
    CHECK(parse_dtype("BFLOAT16") == dtype::bf16);
    CHECK(parse_dtype("FLOAT16") == dtype::fp16);
    CHECK(parse_dtype("DT_FLOAT16") == dtype::fp16);
    CHECK(parse_dtype("float16") == dtype::fp16);
    CHECK(parse_dtype("FLOAT") == dtype::fp32);
    CHECK(parse_dtype("DT_FLOAT") == dtype::fp32);
    CHECK(parse_dtype("INT64") == dtype::int64);
    CHECK(parse_dtype("DT_INT64") == dtype::int64);
    CHECK(parse_dtype("INT32") == dtype::int32);
    CHECK(parse_dtype("UINT8") == dtype::uint8);
    CHECK(parse_dtype("BOOL") == dtype::bool_);
    CHECK(parse_dtype("DOUBLE") == dtype::fp64);
    CHECK(parse_dtype("HF32") == dtype::hf32);
    CHECK(try_parse_dtype("INT64") == dtype::int64);
    CHECK_FALSE(try_parse_dtype("COMPLEX64").has_value());
    CHECK_FALSE(try_parse_dtype("fp1").has_value());
    CHECK_FALSE(try_parse_dtype("fp166").has_value());
}

TEST_CASE("dtype: names and spellings in any case name the same dtype") {
    static_assert(parse_dtype("FP16") == dtype::fp16 && parse_dtype("Bf16") == dtype::bf16);
    const auto flip = [](std::string_view s) {  // upper to lower and lower to upper
        std::string out(s);
        for (char& c : out) {
            if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
            else if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
        return out;
    };
    for (const auto& row : dtypes) {
        INFO(row.name);
        CHECK(parse_dtype(flip(row.name)) == row.value);
        for (std::string_view s : row.spellings) {
            INFO(s);
            CHECK(parse_dtype(flip(s)) == row.value);
        }
    }
    CHECK_FALSE(try_parse_dtype("").has_value());
}

TEST_CASE("dtype: an unknown name throws perfcast::error naming it and the known names") {
    CHECK_THROWS_AS((void)parse_dtype("COMPLEX64"), perfcast::error);
    std::string what;
    try {
        (void)parse_dtype("COMPLEX64");
    } catch (const perfcast::error& e) {
        what = e.what();
    }
    CHECK(what.find("COMPLEX64") != std::string::npos);
    CHECK(what.find("parse_dtype") != std::string::npos);
    for (dtype t : all_dtypes) {
        INFO("known name missing from the message: ", name_of(t));
        CHECK(what.find(name_of(t)) != std::string::npos);
    }
}

}  // namespace test_dtype
