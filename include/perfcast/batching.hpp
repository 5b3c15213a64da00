// perfcast/batching.hpp: batch gears, the split policy, service-time models and a server.
//
// A request carries `bs` samples. The server runs batches only at its gears (every size 1..max,
// or a list such as 1, 2, 4, 8, 16); a batch is padded up to the next gear (the padding is
// wasted work). A request larger than the largest gear is split into ceil(bs / max) chunks as
// equal as possible (20 with max 16 -> 10 + 10), which run in parallel on free streams
// (guide §6: bs 20 with max 16 -> two bs-10 runs, 7.01 ms on 24/48 cores instead of one run of
// 9.19 ms on 12/24).
//
// Service times come through one small interface, `ServiceTime`: any callable
// `duration f(int batch, int concurrent_batches)` giving the latency of one batch of `batch`
// samples (a gear) on one stream while `concurrent_batches` batches (this one included) run on
// the card. graph.hpp / card.hpp provide one from a model; `measured_service` provides one from
// measured (batch, latency) points. `service_table` evaluates a callable once per gear and
// concurrency, so the simulation never calls back into the model.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "error.hpp"
#include "units.hpp"

namespace perfcast {

// ---- request rate -------------------------------------------------------------------------

/// Requests per second: a quantity of dimension 1 / time, so `3.0 / latency` is a rate and
/// `requests / rate` is a time. Read it with `r.in(units::qps)`.
using request_rate = quantity<dimension<-1, 0, 0, 0>>;

namespace units {
inline constexpr unit<dimension<-1, 0, 0, 0>> qps{1.0, "req/s"};
}  // namespace units

namespace literals {
[[nodiscard]] consteval request_rate operator""_qps(long double v) noexcept {
    return request_rate{static_cast<double>(v), units::qps};
}
[[nodiscard]] consteval request_rate operator""_qps(unsigned long long v) noexcept {
    return request_rate{static_cast<double>(v), units::qps};
}
}  // namespace literals

/// Largest batch size perfcast accepts anywhere (a sanity bound against typos such as a
/// timestamp in the bs column; the seed's largest batch is 512, guide §13).
inline constexpr int max_batch_size = 1 << 20;

// ---- gears --------------------------------------------------------------------------------

/// The batch sizes a server runs at: every size 1..max (`every`), or a strictly increasing list
/// (`list`, at most 64 gears).
class gear_set {
public:
    static constexpr std::size_t max_listed = 64;

    constexpr gear_set() noexcept = default;

    /// Every batch size from 1 to `max` is a gear (guide §6: "every bs from 1 to max is a gear").
    [[nodiscard]] static constexpr gear_set every(int max) {
        PERFCAST_EXPECTS(max >= 1 && max <= max_batch_size, "gear_set::every", "max",
                         static_cast<double>(max), "a largest gear in 1..1048576");
        gear_set g;
        g.max_ = max;
        g.dense_ = true;
        return g;
    }

    /// Exactly the listed gears, e.g. {1, 2, 4, 8, 16}: strictly increasing, each >= 1.
    [[nodiscard]] static constexpr gear_set list(std::span<const int> gears) {
        constexpr std::string_view where = "gear_set::list";
        PERFCAST_EXPECTS(!gears.empty() && gears.size() <= max_listed, where, "gears (count)",
                         static_cast<double>(gears.size()), "1 to 64 gears");
        gear_set g;
        int prev = 0;
        for (int b : gears) {
            PERFCAST_EXPECTS(b >= 1 && b <= max_batch_size, where, "gear",
                             static_cast<double>(b), "a batch size in 1..1048576");
            PERFCAST_EXPECTS(b > prev, where, "gear", static_cast<double>(b),
                             "gears in strictly increasing order");
            g.list_[g.count_++] = b;
            prev = b;
        }
        g.max_ = prev;
        g.dense_ = false;
        return g;
    }
    [[nodiscard]] static constexpr gear_set list(std::initializer_list<int> gears) {
        return list(std::span<const int>(gears.begin(), gears.size()));
    }

    /// The largest gear: requests above it are split.
    [[nodiscard]] constexpr int max() const noexcept { return max_; }
    [[nodiscard]] constexpr bool dense() const noexcept { return dense_; }
    /// Number of gears.
    [[nodiscard]] constexpr std::size_t size() const noexcept {
        return dense_ ? static_cast<std::size_t>(max_) : count_;
    }
    /// The i-th gear, smallest first.
    [[nodiscard]] constexpr int operator[](std::size_t i) const noexcept {
        return dense_ ? static_cast<int>(i) + 1 : list_[i];
    }
    /// Index of the smallest gear >= `samples` (1 <= samples <= max()).
    [[nodiscard]] constexpr std::size_t index_for(int samples) const {
        PERFCAST_EXPECTS(samples >= 1 && samples <= max_, "gear_set::gear_for", "samples",
                         static_cast<double>(samples), "1 <= samples <= the largest gear");
        if (dense_) return static_cast<std::size_t>(samples - 1);
        std::size_t lo = 0;
        std::size_t hi = count_ - 1;
        while (lo < hi) {
            const std::size_t mid = (lo + hi) / 2;
            if (list_[mid] >= samples) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }
    /// The smallest gear that holds `samples`: the batch is padded up to it.
    [[nodiscard]] constexpr int gear_for(int samples) const { return (*this)[index_for(samples)]; }

    [[nodiscard]] friend constexpr bool operator==(const gear_set& a, const gear_set& b) noexcept {
        if (a.max_ != b.max_ || a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i) {
            if (a[i] != b[i]) return false;
        }
        return true;
    }

private:
    std::array<int, max_listed> list_{};
    std::size_t count_ = 0;
    int max_ = 1;
    bool dense_ = true;
};

// ---- the split policy ---------------------------------------------------------------------

/// Chunks of one size within a plan.
struct chunk_group {
    int samples = 0;  // samples per chunk
    int gear = 0;     // the gear each chunk runs at (>= samples)
    int count = 0;    // how many chunks
    [[nodiscard]] friend constexpr bool operator==(const chunk_group&, const chunk_group&) = default;
};

/// How one request runs: ceil(bs / max gear) chunks as equal as possible. `large` holds
/// ceil(bs / chunks) samples each, `small` one fewer (absent, count 0, when the split is even).
struct batch_plan {
    int request = 0;  // samples requested
    int chunks = 0;
    chunk_group large{};
    chunk_group small{};

    [[nodiscard]] constexpr bool split() const noexcept { return chunks > 1; }
    /// Samples actually computed: every chunk padded to its gear.
    [[nodiscard]] constexpr int padded() const noexcept {
        return large.gear * large.count + small.gear * small.count;
    }
    /// Padding samples: computed but thrown away.
    [[nodiscard]] constexpr int padding() const noexcept { return padded() - request; }
    /// Share of the computed samples that is padding.
    [[nodiscard]] constexpr double padding_share() const noexcept {
        return padded() == 0 ? 0.0
                             : static_cast<double>(padding()) / static_cast<double>(padded());
    }
    /// Samples and gear of chunk i (large chunks first).
    [[nodiscard]] constexpr chunk_group chunk(int i) const noexcept {
        const chunk_group& g = i < large.count ? large : small;
        return {g.samples, g.gear, 1};
    }
    [[nodiscard]] friend constexpr bool operator==(const batch_plan&, const batch_plan&) = default;
};

/// The plan for a request of `samples` under `gears`.
[[nodiscard]] constexpr batch_plan plan_request(const gear_set& gears, int samples) {
    PERFCAST_EXPECTS(samples >= 1 && samples <= max_batch_size, "plan_request", "bs",
                     static_cast<double>(samples), "a batch size in 1..1048576");
    batch_plan p;
    p.request = samples;
    p.chunks = (samples + gears.max() - 1) / gears.max();
    const int base = samples / p.chunks;
    const int extra = samples % p.chunks;  // chunks that get one more sample
    if (extra == 0) {
        p.large = {base, gears.gear_for(base), p.chunks};
    } else {
        p.large = {base + 1, gears.gear_for(base + 1), extra};
        p.small = {base, gears.gear_for(base), p.chunks - extra};
    }
    return p;
}

// ---- service times ------------------------------------------------------------------------

/// A service-time model: latency of one batch of `batch` samples on one stream while
/// `concurrent_batches` batches (this one included, so >= 1) run on the card.
template <class F>
concept ServiceTime = std::invocable<const F&, int, int> &&
                      std::same_as<std::remove_cvref_t<std::invoke_result_t<const F&, int, int>>,
                                   duration>;

/// Contention between batches running at once when the streams' core splits oversubscribe the
/// card (guide §6: 3 streams of 12/24 cores on a 24/48 card; guide §11: "without a core split,
/// compute queues"). Demand = n x stream cores / card cores for the engine that is the more
/// oversubscribed; the slow-down factor is 1 + sharing x (demand - 1) when demand > 1, else 1.
/// `sharing` = 1: the cores are fully time-shared (n batches on half as many cores as they ask
/// for take twice as long); 0: no slow-down (the ops interleave into each other's idle gaps).
/// All zeros (the default) means no contention. The default sharing 1 is an assumption: the
/// seed gives no measurement of batches slowing each other; calibrate it from a stress test.
struct core_sharing {
    core_count stream_cube{};
    core_count stream_vector{};
    core_count card_cube{};
    core_count card_vector{};
    double sharing = 1.0;

    [[nodiscard]] constexpr double factor(double concurrent) const noexcept {
        double demand = 0;
        if (card_cube.value > 0) {
            demand = concurrent * stream_cube.value / card_cube.value;
        }
        if (card_vector.value > 0) {
            const double v = concurrent * stream_vector.value / card_vector.value;
            if (v > demand) demand = v;
        }
        return demand > 1.0 ? 1.0 + sharing * (demand - 1.0) : 1.0;
    }
    [[nodiscard]] friend constexpr bool operator==(const core_sharing&,
                                                   const core_sharing&) = default;
};

/// A measured point: one batch of `batch` samples ran in `latency` on one stream, alone.
struct latency_point {
    int batch = 0;
    duration latency{};
    [[nodiscard]] friend constexpr bool operator==(const latency_point&,
                                                   const latency_point&) = default;
};

/// A service time from measurements: piecewise linear in the batch size through the points,
/// extended linearly beyond the first two and the last two (one point: the same latency at
/// every batch size), times the contention factor. Below the first point the line is not
/// allowed under first.latency x b / first.batch (a constant cost per sample, the least a
/// batch can cost). Guide §6's two measurements give t(b) = 4.83 ms + 0.218 ms x b.
class measured_service {
public:
    static constexpr std::size_t max_points = 32;

    constexpr measured_service(std::span<const latency_point> points, core_sharing contention = {})
        : contention_(contention) {
        constexpr std::string_view where = "measured_service";
        PERFCAST_EXPECTS(!points.empty() && points.size() <= max_points, where,
                         "points (count)", static_cast<double>(points.size()), "1 to 32 points");
        PERFCAST_EXPECTS(contention.sharing >= 0 && contention.sharing <= 1e6, where,
                         "contention.sharing", contention.sharing, "a finite value >= 0");
        int prev = 0;
        for (const latency_point& p : points) {
            PERFCAST_EXPECTS(p.batch >= 1 && p.batch <= max_batch_size, where, "point.batch",
                             static_cast<double>(p.batch), "a batch size in 1..1048576");
            PERFCAST_EXPECTS(p.batch > prev, where, "point.batch", static_cast<double>(p.batch),
                             "points in strictly increasing batch order");
            PERFCAST_EXPECTS(p.latency.in(units::s) > 0 && is_finite(p.latency), where,
                             "point.latency", p.latency.in(units::ms), "a finite time > 0 ms");
            points_[count_++] = p;
            prev = p.batch;
        }
    }
    constexpr measured_service(std::initializer_list<latency_point> points,
                               core_sharing contention = {})
        : measured_service(std::span<const latency_point>(points.begin(), points.size()),
                           contention) {}

    /// Latency of a batch of `batch` samples alone on its stream.
    [[nodiscard]] constexpr duration alone(int batch) const noexcept {
        const double b = static_cast<double>(batch);
        if (count_ == 1) return points_[0].latency;
        std::size_t i = 1;  // segment [i-1, i]
        while (i + 1 < count_ && points_[i].batch < batch) ++i;
        const latency_point& p0 = points_[i - 1];
        const latency_point& p1 = points_[i];
        const double slope = (p1.latency - p0.latency).in(units::s) /
                             static_cast<double>(p1.batch - p0.batch);
        duration t = p0.latency + duration{slope * (b - static_cast<double>(p0.batch)), units::s};
        if (batch < points_[0].batch) {
            const duration floor = points_[0].latency * (b / static_cast<double>(points_[0].batch));
            if (t < floor) t = floor;
        }
        return t;
    }

    /// The `ServiceTime` interface.
    [[nodiscard]] constexpr duration operator()(int batch, int concurrent_batches) const noexcept {
        return alone(batch) * contention_.factor(static_cast<double>(concurrent_batches));
    }

    [[nodiscard]] constexpr const core_sharing& contention() const noexcept { return contention_; }
    [[nodiscard]] constexpr std::span<const latency_point> points() const noexcept {
        return {points_.data(), count_};
    }

private:
    std::array<latency_point, max_points> points_{};
    std::size_t count_ = 0;
    core_sharing contention_{};
};

/// A service time evaluated once at every gear and every concurrency 1..max_concurrency: what
/// the simulation and the analytic model read. Concurrency above the table's largest is read
/// at the largest.
class service_table {
public:
    service_table() = default;

    /// Evaluates `f` at each gear of `gears` and each concurrency 1..max_concurrency.
    template <ServiceTime F>
    service_table(const gear_set& gears, int max_concurrency, const F& f)
        : gears_(gears), max_concurrency_(max_concurrency) {
        constexpr std::string_view where = "service_table";
        PERFCAST_EXPECTS(max_concurrency >= 1 && max_concurrency <= 4096, where,
                         "max_concurrency", static_cast<double>(max_concurrency),
                         "1 to 4096 concurrent batches");
        const std::size_t n = static_cast<std::size_t>(max_concurrency);
        seconds_.resize(gears.size() * n);
        for (std::size_t g = 0; g < gears.size(); ++g) {
            for (std::size_t c = 0; c < n; ++c) {
                const duration t = f(gears[g], static_cast<int>(c) + 1);
                if (!(t.in(units::s) > 0) || !is_finite(t)) {
                    detail::precondition_failed(
                        where,
                        "service_time(batch " + std::to_string(gears[g]) + ", concurrent " +
                            std::to_string(c + 1) + ")",
                        t.in(units::ms), "a finite time > 0 ms");
                }
                seconds_[g * n + c] = t.in(units::s);
                if (c > 0 && seconds_[g * n + c] != seconds_[g * n]) concurrency_matters_ = true;
            }
        }
    }

    [[nodiscard]] const gear_set& gears() const noexcept { return gears_; }
    [[nodiscard]] int max_concurrency() const noexcept { return max_concurrency_; }
    /// False when every concurrency gives the same time (the simulation then skips re-timing
    /// running batches when another starts or ends).
    [[nodiscard]] bool depends_on_concurrency() const noexcept { return concurrency_matters_; }
    [[nodiscard]] bool empty() const noexcept { return seconds_.empty(); }

    /// Latency of a batch at gear index `g` (see gear_set::index_for) with `concurrent` batches.
    [[nodiscard]] double seconds_at(std::size_t g, int concurrent) const noexcept {
        int c = concurrent < 1 ? 1 : concurrent;
        if (c > max_concurrency_) c = max_concurrency_;
        return seconds_[g * static_cast<std::size_t>(max_concurrency_) +
                        static_cast<std::size_t>(c - 1)];
    }
    /// The same at a fractional concurrency (linear between neighbours), for averages.
    [[nodiscard]] double seconds_at(std::size_t g, double concurrent) const noexcept {
        double c = concurrent < 1.0 ? 1.0 : concurrent;
        const auto top = static_cast<double>(max_concurrency_);
        if (c > top) c = top;
        const int lo = static_cast<int>(c);
        const double frac = c - static_cast<double>(lo);
        const double a = seconds_at(g, lo);
        return frac == 0.0 ? a : a + frac * (seconds_at(g, lo + 1) - a);
    }
    /// Latency of a batch padded to gear `gear` (a gear of gears()) with `concurrent` batches.
    [[nodiscard]] duration at(int gear, int concurrent) const {
        PERFCAST_EXPECTS(!seconds_.empty(), "service_table::at", "table", "empty",
                         "a table built from a service time");
        const std::size_t g = gears_.index_for(gear);
        PERFCAST_EXPECTS(gears_[g] == gear, "service_table::at", "gear",
                         static_cast<double>(gear), "one of the table's gears");
        return duration{seconds_at(g, concurrent), units::s};
    }

private:
    gear_set gears_{};
    int max_concurrency_ = 0;
    std::vector<double> seconds_;  // [gear index][concurrency - 1]
    bool concurrency_matters_ = false;
};

// ---- the server ---------------------------------------------------------------------------

/// One stream (instance) on the card: its core split and its service times.
struct stream_spec {
    core_count cube{};
    core_count vector{};
    service_table service;
};

/// What serves the requests: gears, the batching window, the streams, the card's cores.
struct server_config {
    gear_set gears = gear_set::every(16);
    /// Wait up to this long after the oldest queued request before running a batch that does
    /// not fill the largest gear (0: run at once whenever a stream is free).
    duration window{};
    /// Most requests merged into one batch (0: no limit; 1: no merging).
    int max_requests_per_batch = 0;
    std::vector<stream_spec> streams;
    core_count card_cube{};
    core_count card_vector{};
};

/// Rejects a configuration that cannot run: no streams, a negative or NaN window, a stream
/// whose service table has other gears than the server or whose split exceeds the card.
inline const server_config& validate(const server_config& c) {
    constexpr std::string_view where = "validate(server_config)";
    PERFCAST_EXPECTS(c.window.in(units::s) >= 0 && is_finite(c.window), where, "window",
                     c.window.in(units::ms), "a finite time >= 0 ms");
    PERFCAST_EXPECTS(c.max_requests_per_batch >= 0, where, "max_requests_per_batch",
                     static_cast<double>(c.max_requests_per_batch), ">= 0 (0: no limit)");
    PERFCAST_EXPECTS(!c.streams.empty() && c.streams.size() <= 4096, where, "streams",
                     static_cast<double>(c.streams.size()), "1 to 4096 streams");
    PERFCAST_EXPECTS(c.card_cube.value >= 1, where, "card_cube",
                     static_cast<double>(c.card_cube.value), "at least 1 core");
    PERFCAST_EXPECTS(c.card_vector.value >= 0, where, "card_vector",
                     static_cast<double>(c.card_vector.value), ">= 0 cores");
    for (std::size_t i = 0; i < c.streams.size(); ++i) {
        const stream_spec& s = c.streams[i];
        const std::string field = "streams[" + std::to_string(i) + "]";
        PERFCAST_EXPECTS(s.cube.value >= 1 && s.cube.value <= c.card_cube.value, where,
                         field + ".cube", static_cast<double>(s.cube.value),
                         "1 to card_cube cores");
        PERFCAST_EXPECTS(s.vector.value >= 0 && s.vector.value <= c.card_vector.value, where,
                         field + ".vector", static_cast<double>(s.vector.value),
                         "0 to card_vector cores");
        PERFCAST_EXPECTS(!s.service.empty(), where, field + ".service", "empty",
                         "a service table built from a service time");
        PERFCAST_EXPECTS(s.service.gears() == c.gears, where, field + ".service.gears",
                         static_cast<double>(s.service.gears().max()),
                         "the server's gears (build the table with server_config::gears)");
    }
    return c;
}

/// A server of `streams` identical streams: the usual case and what `make_server` builds.
struct uniform_server {
    gear_set gears = gear_set::every(16);
    duration window{};
    int max_requests_per_batch = 0;
    int streams = 1;
    core_count stream_cube{};
    core_count stream_vector{};
    core_count card_cube{};
    core_count card_vector{};
};

/// Builds and validates a server whose streams all use `service`, tabulated up to `streams`
/// concurrent batches.
template <ServiceTime F>
[[nodiscard]] server_config make_server(const uniform_server& u, const F& service) {
    PERFCAST_EXPECTS(u.streams >= 1 && u.streams <= 4096, "make_server", "streams",
                     static_cast<double>(u.streams), "1 to 4096 streams");
    server_config c;
    c.gears = u.gears;
    c.window = u.window;
    c.max_requests_per_batch = u.max_requests_per_batch;
    c.card_cube = u.card_cube;
    c.card_vector = u.card_vector;
    const service_table table(u.gears, u.streams, service);
    c.streams.assign(static_cast<std::size_t>(u.streams),
                     stream_spec{u.stream_cube, u.stream_vector, table});
    validate(c);
    return c;
}

// ---- one request on an idle card ----------------------------------------------------------

/// What one request costs when it finds the card idle (no queueing).
struct request_cost {
    batch_plan plan{};
    duration window_wait{};  // the batching window it waits out (0 when it fills a gear)
    duration service{};      // first chunk start to last chunk end
    duration latency{};      // window_wait + service
    duration core_time{};    // sum over chunks of cube cores x chunk time (guide §12)
    duration stream_time{};  // sum over chunks of chunk time: streams held x time
    int cores_held = 0;      // most cube cores held at once
    int waves = 0;           // rounds of chunks when chunks > streams
};

/// Request of `bs` samples on an idle card: chunk i runs on stream i mod S, in waves of S
/// chunks; a wave runs its chunks concurrently (its concurrency is its chunk count) and lasts
/// as long as its slowest chunk. A request that is not split and does not fill the largest gear
/// waits out the window first (no other request arrives to fill it at low load); with
/// max_requests_per_batch = 1 every request is a full batch and never waits.
[[nodiscard]] inline request_cost cost_request(const server_config& c, int bs) {
    request_cost r;
    r.plan = plan_request(c.gears, bs);
    const bool full = r.plan.split() || r.plan.request == c.gears.max() ||
                      c.max_requests_per_batch == 1;
    r.window_wait = full ? duration{} : c.window;
    const int s = static_cast<int>(c.streams.size());
    for (int first = 0; first < r.plan.chunks; first += s) {
        const int in_wave = r.plan.chunks - first < s ? r.plan.chunks - first : s;
        double wave = 0;
        int cores = 0;
        for (int k = 0; k < in_wave; ++k) {
            const chunk_group ch = r.plan.chunk(first + k);
            const stream_spec& st = c.streams[static_cast<std::size_t>(k)];
            const double t = st.service.seconds_at(c.gears.index_for(ch.gear), in_wave);
            if (t > wave) wave = t;
            r.core_time += duration{t * st.cube.value, units::s};
            r.stream_time += duration{t, units::s};
            cores += st.cube.value;
        }
        r.service += duration{wave, units::s};
        if (cores > r.cores_held) r.cores_held = cores;
        ++r.waves;
    }
    r.latency = r.window_wait + r.service;
    return r;
}

}  // namespace perfcast
