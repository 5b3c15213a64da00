// perfcast/random.hpp: the library's one pseudo-random generator, random_stream
// (xoshiro256** seeded by splitmix64), and a logarithm for its exponential draws.
//
// Determinism: one small PRNG (xoshiro256**, seeded by splitmix64) and a logarithm written here
// with + - * / only, so the same seed gives bit-identical results with GCC, Clang, libstdc++ and
// libc++ (no std::*_distribution, whose outputs differ between standard libraries; no libm in
// the simulation). Bit identity holds on one instruction set without -ffast-math or FMA
// contraction (-ffp-contract=off where a target has FMA, e.g. aarch64). Users: the serving
// simulation (serving/arrivals.hpp, serving/simulation.hpp), the hold-out split of calibration
// (profile/holdout.hpp, splitmix64) and its cross-validation folds (profile/calibrate.hpp,
// splitmix64).
#pragma once

#include <bit>
#include <cstdint>

namespace perfcast {

namespace detail {

/// splitmix64 (Steele, Lea, Flood 2014; Vigna's reference code): the seeder.
[[nodiscard]] constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/// Natural logarithm of a finite x > 0 from + - * / only (same bits everywhere): x = m 2^e with
/// m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.1716, by its
/// series to s^23 (the next term is below 2^-56 relative); ln 2 split in two (fdlibm).
[[nodiscard]] constexpr double ln(double x) noexcept {
    int e = 0;
    if (x < 0x1.0p-1022) {  // subnormal: scale into the normal range
        x *= 0x1.0p54;
        e = -54;
    }
    const auto bits = std::bit_cast<std::uint64_t>(x);
    e += static_cast<int>((bits >> 52) & 0x7FF) - 1023;
    double m = std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFULL) | 0x3FF0000000000000ULL);
    if (m > 1.4142135623730951) {
        m *= 0.5;
        ++e;
    }
    const double s = (m - 1.0) / (m + 1.0);
    const double z = s * s;
    constexpr double c[12] = {1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13,
                              1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3,  1.0};
    double poly = c[0];
    for (int k = 1; k < 12; ++k) poly = c[k] + z * poly;
    const double ln_m = 2.0 * s * poly;
    constexpr double ln2_hi = 6.93147180369123816490e-01;
    constexpr double ln2_lo = 1.90821492927058770002e-10;
    const double de = static_cast<double>(e);
    return de * ln2_hi + (ln_m + de * ln2_lo);
}

}  // namespace detail

/// xoshiro256** 1.0 (Blackman and Vigna 2018), its state filled by splitmix64 from the seed.
class random_stream {
public:
    constexpr explicit random_stream(std::uint64_t seed) noexcept {
        std::uint64_t s = seed;
        for (std::uint64_t& w : s_) w = detail::splitmix64(s);
    }
    [[nodiscard]] constexpr std::uint64_t next() noexcept {
        const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = std::rotl(s_[3], 45);
        return result;
    }
    /// Uniform in [0, 1): the top 53 bits.
    [[nodiscard]] constexpr double uniform() noexcept {
        return static_cast<double>(next() >> 11) * 0x1.0p-53;
    }
    /// Exponential with mean 1 (inverse CDF; 1 - u is in (0, 1], so the log is finite).
    [[nodiscard]] constexpr double exponential() noexcept { return -detail::ln(1.0 - uniform()); }

private:
    std::uint64_t s_[4]{};
};

}  // namespace perfcast
