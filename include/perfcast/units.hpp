// perfcast/units.hpp: strong, constexpr physical quantities.
//
// A quantity is a double in a fixed base unit tagged with its dimension, a vector of exponents
// over four base dimensions: time (s), data (byte), cycles (clock cycle) and work (flop).
// Frequency is cycles per second, so `cycles / frequency -> time` and
// `time * frequency -> cycles` fall out of the algebra, and per-core memory rates in bytes per
// cycle (the CANN ini files' unit) times a clock give a bandwidth. Different dimensions never
// mix: Hz + bytes, MHz where a bandwidth is expected, or a raw double where a time is expected
// do not compile (tests/test_units.cpp checks it with `requires` and static_assert, and
// tests/compile_fail/ holds the mix-ups that must fail to compile).
//
// Construction from a number names the unit: `duration{150.0, us}`; reading names it too:
// `t.in(us)`. A dimensionless result (bytes / bytes) is a plain double.
#pragma once

#include <cmath>
#include <compare>
#include <concepts>
#include <limits>
#include <type_traits>

#include "counts.hpp"  // core_count, batch_size, stream_count

namespace perfcast {

/// Exponents over the base dimensions (time, data, cycles, work).
template <int Time, int Data, int Cycles, int Work>
struct dimension {
    static constexpr int time = Time;
    static constexpr int data = Data;
    static constexpr int cycles = Cycles;
    static constexpr int work = Work;
};

namespace detail {
template <class T>
struct is_dimension : std::false_type {};
template <int A, int B, int C, int D>
struct is_dimension<dimension<A, B, C, D>> : std::true_type {};

template <class D1, class D2>
using dim_mul = dimension<D1::time + D2::time, D1::data + D2::data, D1::cycles + D2::cycles,
                          D1::work + D2::work>;
template <class D1, class D2>
using dim_div = dimension<D1::time - D2::time, D1::data - D2::data, D1::cycles - D2::cycles,
                          D1::work - D2::work>;
template <class D>
inline constexpr bool dimensionless = D::time == 0 && D::data == 0 && D::cycles == 0 &&
                                      D::work == 0;
}  // namespace detail

template <class D>
concept Dimension = detail::is_dimension<D>::value;

using time_dim = dimension<1, 0, 0, 0>;
using data_dim = dimension<0, 1, 0, 0>;
using cycles_dim = dimension<0, 0, 1, 0>;
using work_dim = dimension<0, 0, 0, 1>;
using frequency_dim = dimension<-1, 0, 1, 0>;        // cycles per second
using bandwidth_dim = dimension<-1, 1, 0, 0>;        // bytes per second
using flop_rate_dim = dimension<-1, 0, 0, 1>;        // flops per second
using bytes_per_cycle_dim = dimension<0, 1, -1, 0>;  // per-core memory rate (CANN ini)
using flops_per_cycle_dim = dimension<0, 0, -1, 1>;  // per-core compute rate

/// A unit of dimension D: how many base units one of it is, and its symbol.
template <Dimension D>
struct unit {
    double factor;
    const char* symbol;
};

template <Dimension D>
class quantity;

namespace detail {
template <class D>
[[nodiscard]] constexpr auto make_quantity(double base) noexcept {
    if constexpr (dimensionless<D>) {
        return base;
    } else {
        return quantity<D>::from_base(base);
    }
}
}  // namespace detail

/// A value of dimension D, stored in the base unit (s, B, cycle, flop and their ratios).
/// The member is public only so that the type is structural (usable in template arguments);
/// read it through `in(unit)`.
template <Dimension D>
class quantity {
public:
    using dimension_type = D;

    constexpr quantity() noexcept = default;
    /// `quantity{150.0, us}`: explicit, the unit is always named.
    constexpr quantity(double value, unit<D> u) noexcept : base_value_(value * u.factor) {}

    /// Number of `u` in this quantity.
    [[nodiscard]] constexpr double in(unit<D> u) const noexcept { return base_value_ / u.factor; }

    [[nodiscard]] static constexpr quantity from_base(double base) noexcept {
        quantity q;
        q.base_value_ = base;
        return q;
    }
    [[nodiscard]] constexpr double base_value() const noexcept { return base_value_; }

    [[nodiscard]] static constexpr quantity zero() noexcept { return quantity{}; }

    constexpr quantity& operator+=(quantity o) noexcept {
        base_value_ += o.base_value_;
        return *this;
    }
    constexpr quantity& operator-=(quantity o) noexcept {
        base_value_ -= o.base_value_;
        return *this;
    }
    constexpr quantity& operator*=(double s) noexcept {
        base_value_ *= s;
        return *this;
    }
    constexpr quantity& operator/=(double s) noexcept {
        base_value_ /= s;
        return *this;
    }

    [[nodiscard]] friend constexpr quantity operator+(quantity a, quantity b) noexcept {
        return from_base(a.base_value_ + b.base_value_);
    }
    [[nodiscard]] friend constexpr quantity operator-(quantity a, quantity b) noexcept {
        return from_base(a.base_value_ - b.base_value_);
    }
    [[nodiscard]] friend constexpr quantity operator-(quantity a) noexcept {
        return from_base(-a.base_value_);
    }
    [[nodiscard]] friend constexpr quantity operator*(quantity a, double s) noexcept {
        return from_base(a.base_value_ * s);
    }
    [[nodiscard]] friend constexpr quantity operator*(double s, quantity a) noexcept {
        return from_base(a.base_value_ * s);
    }
    [[nodiscard]] friend constexpr quantity operator/(quantity a, double s) noexcept {
        return from_base(a.base_value_ / s);
    }
    [[nodiscard]] friend constexpr bool operator==(quantity a, quantity b) noexcept = default;
    [[nodiscard]] friend constexpr auto operator<=>(quantity a, quantity b) noexcept = default;

    double base_value_ = 0.0;  // implementation detail; public for structural-type rules
};

/// Products and quotients of quantities carry the combined dimension.
template <Dimension D1, Dimension D2>
[[nodiscard]] constexpr auto operator*(quantity<D1> a, quantity<D2> b) noexcept {
    return detail::make_quantity<detail::dim_mul<D1, D2>>(a.base_value() * b.base_value());
}
template <Dimension D1, Dimension D2>
[[nodiscard]] constexpr auto operator/(quantity<D1> a, quantity<D2> b) noexcept {
    return detail::make_quantity<detail::dim_div<D1, D2>>(a.base_value() / b.base_value());
}
template <Dimension D>
[[nodiscard]] constexpr auto operator/(double s, quantity<D> a) noexcept {
    return detail::make_quantity<detail::dim_div<dimension<0, 0, 0, 0>, D>>(s / a.base_value());
}

using duration = quantity<time_dim>;
using data_size = quantity<data_dim>;
using cycle_count = quantity<cycles_dim>;
using flop_count = quantity<work_dim>;
using frequency = quantity<frequency_dim>;
using bandwidth = quantity<bandwidth_dim>;
using flop_rate = quantity<flop_rate_dim>;
using bytes_per_cycle = quantity<bytes_per_cycle_dim>;
using flops_per_cycle = quantity<flops_per_cycle_dim>;

template <class T>
concept Quantity = requires { typename T::dimension_type; } &&
                   std::same_as<T, quantity<typename T::dimension_type>>;

/// Units. Decimal prefixes are powers of ten (KB = 1000 B, GB/s = 1e9 B/s); binary ones are
/// powers of two (KiB = 1024 B). Bits are 1/8 byte, so a Gbit/s figure cannot pose as GB/s.
namespace units {
inline constexpr unit<time_dim> s{1.0, "s"};
inline constexpr unit<time_dim> ms{1e-3, "ms"};
inline constexpr unit<time_dim> us{1e-6, "us"};
inline constexpr unit<time_dim> ns{1e-9, "ns"};

inline constexpr unit<data_dim> B{1.0, "B"};
inline constexpr unit<data_dim> bit{0.125, "bit"};
inline constexpr unit<data_dim> Kbit{1e3 / 8.0, "Kbit"};
inline constexpr unit<data_dim> Mbit{1e6 / 8.0, "Mbit"};
inline constexpr unit<data_dim> Gbit{1e9 / 8.0, "Gbit"};
inline constexpr unit<data_dim> KB{1e3, "KB"};
inline constexpr unit<data_dim> MB{1e6, "MB"};
inline constexpr unit<data_dim> GB{1e9, "GB"};
inline constexpr unit<data_dim> TB{1e12, "TB"};
inline constexpr unit<data_dim> PB{1e15, "PB"};
inline constexpr unit<data_dim> KiB{1024.0, "KiB"};
inline constexpr unit<data_dim> MiB{1024.0 * 1024.0, "MiB"};
inline constexpr unit<data_dim> GiB{1024.0 * 1024.0 * 1024.0, "GiB"};
inline constexpr unit<data_dim> TiB{1024.0 * 1024.0 * 1024.0 * 1024.0, "TiB"};
inline constexpr unit<data_dim> PiB{1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0, "PiB"};

inline constexpr unit<cycles_dim> cycle{1.0, "cycle"};
inline constexpr unit<work_dim> flop{1.0, "flop"};
inline constexpr unit<work_dim> Gflop{1e9, "Gflop"};

inline constexpr unit<frequency_dim> Hz{1.0, "Hz"};
inline constexpr unit<frequency_dim> kHz{1e3, "kHz"};
inline constexpr unit<frequency_dim> MHz{1e6, "MHz"};
inline constexpr unit<frequency_dim> GHz{1e9, "GHz"};

inline constexpr unit<bandwidth_dim> Bps{1.0, "B/s"};
inline constexpr unit<bandwidth_dim> MBps{1e6, "MB/s"};
inline constexpr unit<bandwidth_dim> GBps{1e9, "GB/s"};
inline constexpr unit<bandwidth_dim> TBps{1e12, "TB/s"};
inline constexpr unit<bandwidth_dim> Gbitps{1e9 / 8.0, "Gbit/s"};

inline constexpr unit<flop_rate_dim> flops{1.0, "flop/s"};
inline constexpr unit<flop_rate_dim> GFLOPS{1e9, "GFLOP/s"};
inline constexpr unit<flop_rate_dim> TFLOPS{1e12, "TFLOP/s"};

inline constexpr unit<bytes_per_cycle_dim> B_per_cycle{1.0, "B/cycle"};
inline constexpr unit<flops_per_cycle_dim> flop_per_cycle{1.0, "flop/cycle"};
}  // namespace units

/// User-defined literals: `150_us`, `1650_MHz`, `64_KiB`, `1.6_TBps`.
namespace literals {
#define PERFCAST_DEFINE_LITERAL(suffix, type, u)                                               \
    [[nodiscard]] consteval type operator""_##suffix(long double v) noexcept {                \
        return type{static_cast<double>(v), u};                                                \
    }                                                                                          \
    [[nodiscard]] consteval type operator""_##suffix(unsigned long long v) noexcept {         \
        return type{static_cast<double>(v), u};                                                \
    }
PERFCAST_DEFINE_LITERAL(ns, duration, units::ns)
PERFCAST_DEFINE_LITERAL(us, duration, units::us)
PERFCAST_DEFINE_LITERAL(ms, duration, units::ms)
PERFCAST_DEFINE_LITERAL(s, duration, units::s)
PERFCAST_DEFINE_LITERAL(Hz, frequency, units::Hz)
PERFCAST_DEFINE_LITERAL(kHz, frequency, units::kHz)
PERFCAST_DEFINE_LITERAL(MHz, frequency, units::MHz)
PERFCAST_DEFINE_LITERAL(GHz, frequency, units::GHz)
PERFCAST_DEFINE_LITERAL(B, data_size, units::B)
PERFCAST_DEFINE_LITERAL(KB, data_size, units::KB)
PERFCAST_DEFINE_LITERAL(MB, data_size, units::MB)
PERFCAST_DEFINE_LITERAL(GB, data_size, units::GB)
PERFCAST_DEFINE_LITERAL(KiB, data_size, units::KiB)
PERFCAST_DEFINE_LITERAL(MiB, data_size, units::MiB)
PERFCAST_DEFINE_LITERAL(GiB, data_size, units::GiB)
PERFCAST_DEFINE_LITERAL(GBps, bandwidth, units::GBps)
PERFCAST_DEFINE_LITERAL(TBps, bandwidth, units::TBps)
PERFCAST_DEFINE_LITERAL(cycles, cycle_count, units::cycle)
PERFCAST_DEFINE_LITERAL(TFLOPS, flop_rate, units::TFLOPS)
#undef PERFCAST_DEFINE_LITERAL
}  // namespace literals

/// True when the stored value is finite (not NaN, not infinite).
template <Dimension D>
[[nodiscard]] constexpr bool is_finite(quantity<D> q) noexcept {
    const double v = q.base_value();
    return v == v && v <= std::numeric_limits<double>::max() &&
           v >= -std::numeric_limits<double>::max();
}

template <Dimension D>
[[nodiscard]] constexpr quantity<D> abs(quantity<D> q) noexcept {
    return q.base_value() < 0 ? -q : q;
}

/// Relative closeness for tests and static_asserts: |a - b| <= rel * max(|a|, |b|).
template <Dimension D>
[[nodiscard]] constexpr bool approx_equal(quantity<D> a, quantity<D> b, double rel) noexcept {
    const double x = a.base_value();
    const double y = b.base_value();
    const double d = x > y ? x - y : y - x;
    const double m = (x < 0 ? -x : x) > (y < 0 ? -y : y) ? (x < 0 ? -x : x) : (y < 0 ? -y : y);
    return d <= rel * m;
}
[[nodiscard]] constexpr bool approx_equal(double x, double y, double rel) noexcept {
    const double d = x > y ? x - y : y - x;
    const double ax = x < 0 ? -x : x;
    const double ay = y < 0 ? -y : y;
    return d <= rel * (ax > ay ? ax : ay);
}

/// Cycles of `n` cores of clock `f` running for `t`: the seed's utilization denominator.
[[nodiscard]] constexpr cycle_count available_cycles(frequency f, core_count n,
                                                     duration t) noexcept {
    return t * f * static_cast<double>(n.value);
}

}  // namespace perfcast
