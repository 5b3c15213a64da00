// perfcast/serving.hpp: a card serving requests under load.
//
//   simulate(server, dist, 500_qps, 100000)   seeded discrete-event simulation
//   analyze(server, dist, 500_qps)            M/G/c approximation (Allen-Cunneen), microseconds
//   saturation(server, dist)                  the load past which the queue grows without end
//   classify(qps, run, saturation)            stable, queue-growing or saturated: is a run's
//                                             percentile a steady-state figure at all?
//   find_capacity(server, dist, {.target = 10_ms})   highest stable QPS whose TP99 meets a
//                                             target, at most saturation x (1 - margin)
//   cards_for(traffic, capacity, headroom)    cards = ceil(traffic / (capacity x (1 - headroom)))
//
// The simulation: requests arrive (Poisson, or replayed from a trace), each is planned by the
// split policy (batching.hpp) into chunks that join one FIFO queue. Whenever a stream is free the
// queue's head items are merged into a batch while they fit in the largest gear; the batch runs
// at once if it is full (the next item does not fit, it reached the largest gear or the request
// limit), holds a chunk of a split request, or its oldest request has waited the batching
// window; otherwise the server waits for more requests until the window ends. A batch runs on
// the lowest-numbered free stream, padded to its gear. Its service time comes from the stream's
// service table at the number of batches running on the card; when that number changes while it
// runs, the rest of its work is re-timed at the new concurrency (contention between batches,
// guide §11). A request completes when its last chunk does.
//
// Determinism: one small PRNG (xoshiro256**, seeded by splitmix64) and a logarithm written here
// with + - * / only, so the same seed gives bit-identical results with GCC, Clang, libstdc++ and
// libc++ (no std::*_distribution, whose outputs differ between standard libraries; no libm in
// the simulation). Bit identity holds on one instruction set without -ffast-math or FMA
// contraction (-ffp-contract=off where a target has FMA, e.g. aarch64).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "batching.hpp"
#include "card.hpp"
#include "chip.hpp"
#include "distribution.hpp"
#include "enum_table.hpp"
#include "error.hpp"
#include "graph.hpp"
#include "progress.hpp"
#include "units.hpp"

namespace perfcast {

// ---- random numbers -----------------------------------------------------------------------

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

// ---- arrivals -----------------------------------------------------------------------------

/// One request: when it arrives and how many samples it carries.
struct arrival {
    duration time{};
    int bs = 0;
    [[nodiscard]] friend constexpr bool operator==(const arrival&, const arrival&) = default;
};

/// Anything that hands out arrivals in time order, then nothing: poisson_arrivals,
/// trace_arrivals, io::trace_reader (a CSV trace streamed from disk).
template <class S>
concept ArrivalSource = requires(S& s) {
    { s.next() } -> std::same_as<std::optional<arrival>>;
};

/// `count` requests with exponential gaps of mean 1 / qps and batch sizes drawn from `dist`.
/// The uniform numbers do not depend on qps (common random numbers): runs at two loads see the
/// same requests, one compressed in time, which makes latency-vs-QPS curves smooth and the
/// capacity bisection stable.
class poisson_arrivals {
public:
    poisson_arrivals(request_rate qps, batch_distribution dist, std::uint64_t count,
                     std::uint64_t seed = 1)
        : dist_(std::move(dist)), rng_(seed), left_(count) {
        PERFCAST_EXPECTS(qps.in(units::qps) > 0 && is_finite(qps), "poisson_arrivals", "qps",
                         qps.in(units::qps), "a finite rate > 0 requests per second");
        mean_gap_s_ = 1.0 / qps.in(units::qps);
    }
    [[nodiscard]] std::optional<arrival> next() noexcept {
        if (left_ == 0) return std::nullopt;
        --left_;
        t_ += rng_.exponential() * mean_gap_s_;
        const int bs = dist_.sample(rng_.uniform());
        return arrival{duration{t_, units::s}, bs};
    }

private:
    batch_distribution dist_;
    random_stream rng_;
    std::uint64_t left_;
    double mean_gap_s_ = 0;
    double t_ = 0;
};

/// Replays arrivals held in memory (not copied: the span must outlive the source), optionally
/// `speedup` times faster (times divided by speedup). Checks the order up front: an arrival
/// earlier than the one before it is an error naming its index.
class trace_arrivals {
public:
    explicit trace_arrivals(std::span<const arrival> trace, double speedup = 1.0)
        : trace_(trace), speedup_(speedup) {
        constexpr std::string_view where = "trace_arrivals";
        PERFCAST_EXPECTS(speedup > 0 && speedup <= 1e300, where, "speedup", speedup,
                         "a finite factor > 0");
        for (std::size_t i = 0; i < trace.size(); ++i) {
            const std::string field = "trace[" + std::to_string(i) + "]";
            PERFCAST_EXPECTS(is_finite(trace[i].time), where, field + ".time (ms)",
                             trace[i].time.in(units::ms), "a finite time");
            if (i > 0 && trace[i].time < trace[i - 1].time) {
                detail::precondition_failed(
                    where, field + ".time (ms)", trace[i].time.in(units::ms),
                    "arrivals in time order (trace[" + std::to_string(i - 1) + "] is at " +
                        detail::number_text(trace[i - 1].time.in(units::ms)) + " ms)");
            }
            PERFCAST_EXPECTS(trace[i].bs >= 1 && trace[i].bs <= max_batch_size, where,
                             field + ".bs", static_cast<double>(trace[i].bs),
                             "a batch size in 1..1048576");
        }
    }
    [[nodiscard]] std::optional<arrival> next() noexcept {
        if (i_ == trace_.size()) return std::nullopt;
        arrival a = trace_[i_++];
        a.time = a.time / speedup_;
        return a;
    }

private:
    std::span<const arrival> trace_;
    double speedup_;
    std::size_t i_ = 0;
};

/// Mean request rate of a trace: (n - 1) / (last - first). Needs two arrivals at different times.
[[nodiscard]] inline request_rate mean_rate(std::span<const arrival> trace) {
    PERFCAST_EXPECTS(trace.size() >= 2, "mean_rate", "trace (arrivals)",
                     static_cast<double>(trace.size()), "at least 2 arrivals");
    const duration span = trace.back().time - trace.front().time;
    PERFCAST_EXPECTS(span.in(units::s) > 0 && is_finite(span), "mean_rate", "trace span (ms)",
                     span.in(units::ms), "a last arrival later than the first");
    return static_cast<double>(trace.size() - 1) / span;
}

/// The batch-size histogram of a trace.
[[nodiscard]] inline batch_distribution batch_sizes_of(std::span<const arrival> trace) {
    PERFCAST_EXPECTS(!trace.empty(), "batch_sizes_of", "trace (arrivals)", 0.0,
                     "at least 1 arrival");
    std::vector<int> sizes;
    sizes.reserve(trace.size());
    for (const arrival& a : trace) sizes.push_back(a.bs);
    std::sort(sizes.begin(), sizes.end());
    std::vector<bs_count> bins;
    for (int b : sizes) {
        if (bins.empty() || bins.back().bs != b) bins.push_back({b, 0.0});
        bins.back().count += 1.0;
    }
    return batch_distribution(bins);
}

// ---- simulation options and results ------------------------------------------------------

/// Which interval of simulated time to record as a timeline (io/chrome_trace.hpp writes it).
struct timeline_options {
    duration from{};
    duration to{};
    std::size_t max_events = 200000;  // per kind (batches, requests, queue points)
};

struct sim_options {
    std::uint64_t seed = 1;
    /// Requests at the start whose latencies are not counted, and before whose arrival the
    /// time averages (utilization, queue) do not start: the card starts empty.
    std::uint64_t warmup = 0;
    /// Variability of service times around the table's value (coefficient of variation):
    /// 0 deterministic; 1/sqrt(k) for k = 1..100 draws an Erlang-k factor of mean 1
    /// (1: exponential, for checks against M/M/c). Other values are rounded to the nearest k.
    double service_cv = 0;
    /// Return every counted latency, sorted (for quantiles other than the fixed ones).
    bool keep_latencies = false;
    std::optional<timeline_options> timeline{};
    /// Hears of the requests served so far ("simulating", unit "requests served"), every
    /// progress_every_batches batches; the total is the run's request count where simulate
    /// knows it (the Poisson overload), else 0.
    progress_fn progress{};
};

/// Batches a simulation runs between two progress reports: a few thousand events, a
/// millisecond or so, so that even a run of huge split requests reports often.
inline constexpr std::uint64_t progress_every_batches = 4096;

/// One batch on a stream, as recorded in a timeline.
struct timeline_batch {
    int stream = 0;
    duration start{};
    duration end{};
    int samples = 0;     // before padding
    int gear = 0;        // after padding
    int requests = 0;    // items merged (requests or chunks of split requests)
    int concurrent = 0;  // batches running on the card when it started (itself included)
    std::uint64_t first_request = 0;  // id of the oldest request in it
};

/// One request: arrival, start of its last chunk, end of its last chunk.
struct timeline_request {
    std::uint64_t id = 0;
    int bs = 0;
    int chunks = 0;
    duration arrival{};
    duration start{};
    duration end{};
};

struct timeline_queue_point {
    duration time{};
    std::size_t waiting = 0;  // requests with a chunk not yet started
};

struct timeline_stream {
    int cube = 0;
    int vector = 0;
};

/// What happened in [from, to): batches that started, requests that arrived, queue changes.
struct serving_timeline {
    duration from{};
    duration to{};
    std::vector<timeline_stream> streams;
    std::vector<timeline_batch> batches;
    std::vector<timeline_request> requests;
    std::vector<timeline_queue_point> queue;
    bool truncated = false;  // max_events was reached
};

/// What a simulation measured. Latencies are arrival to completion of the last chunk, over the
/// requests after the warm-up; time averages are over [arrival of the first counted request,
/// last arrival].
struct serving_result {
    std::uint64_t requests = 0;  // counted requests
    request_rate qps{};          // arrivals per second over the observed interval
    duration mean{};
    duration p50{};
    duration p90{};
    duration p99{};
    duration p999{};
    duration max{};
    /// Standard error of `mean` by 32 batch means over consecutive completions (the requests'
    /// latencies are correlated, so the naive sd / sqrt(n) would understate it).
    duration mean_stderr{};
    /// Arrival to the start of the request's last chunk.
    duration mean_wait{};
    /// Share of counted requests whose last chunk did not start on arrival.
    double wait_share = 0;
    /// Mean wait of the first and of the last quarter of the counted requests, in arrival
    /// order (0 below 8 counted requests): a queue that grows through the run shows as a last
    /// quarter far above the first (queue_grew()).
    duration wait_first_quarter{};
    duration wait_last_quarter{};
    /// Time-average share of streams busy.
    double utilization = 0;
    /// Time-average share of the card's cube cores held by running batches (capped at 1 when
    /// the streams' splits oversubscribe the card).
    double core_utilization = 0;
    /// Requests waiting (a chunk not yet started): time average and maximum.
    double mean_queue = 0;
    std::size_t max_queue = 0;
    std::uint64_t batches = 0;   // batches started from the first counted arrival on
    double mean_batch = 0;       // samples per batch, before padding
    double padding_share = 0;    // padding samples / gear samples
    duration span{};             // observed interval
    std::vector<duration> latencies;  // sorted, when sim_options::keep_latencies
    serving_timeline timeline;        // when sim_options::timeline

    /// Whether the queue grew through the run (queue_growth_ratio, queue_growth_floor): the
    /// mark of a load the card cannot keep up with, whose percentiles measure the run's length.
    [[nodiscard]] bool queue_grew() const noexcept;

    /// Latency at share p of the kept latencies (nearest rank).
    [[nodiscard]] duration at(double p) const {
        PERFCAST_EXPECTS(!latencies.empty(), "serving_result::at", "latencies", "not kept",
                         "a result of a run with sim_options::keep_latencies");
        PERFCAST_EXPECTS(p > 0 && p <= 1, "serving_result::at", "p", p, "a share in (0, 1]");
        const double n = static_cast<double>(latencies.size());
        auto k = static_cast<std::size_t>(std::ceil(p * n * (1.0 - detail::rank_tolerance)));
        if (k < 1) k = 1;
        return latencies[k - 1];
    }
};

// ---- the simulator ------------------------------------------------------------------------

namespace detail {

/// Nearest rank of share p among n values (1-based).
[[nodiscard]] inline std::size_t nearest_rank(double p, std::size_t n) noexcept {
    auto k = static_cast<std::size_t>(
        std::ceil(p * static_cast<double>(n) * (1.0 - rank_tolerance)));
    return k < 1 ? 1 : (k > n ? n : k);
}

/// Erlang shape for a coefficient of variation: 0 (deterministic) or k = round(1 / cv^2).
[[nodiscard]] inline int erlang_shape(double cv) {
    PERFCAST_EXPECTS(cv == 0 || (cv >= 0.0995 && cv <= 1.0), "simulate", "service_cv", cv,
                     "0 (deterministic) or a coefficient of variation in [0.1, 1]");
    if (cv == 0) return 0;
    const double k = std::round(1.0 / (cv * cv));
    return k < 1 ? 1 : (k > 100 ? 100 : static_cast<int>(k));
}

class simulator {
public:
    simulator(const server_config& c, const sim_options& o) : c_(c), o_(o) {
        validate(c);
        erlang_k_ = erlang_shape(o.service_cv);
        std::uint64_t s = o.seed ^ 0x5E4C1A7E0F0E5EEDULL;  // noise stream apart from arrivals
        noise_ = random_stream(splitmix64(s));
        max_gear_ = c.gears.max();
        window_s_ = c.window.in(units::s);
        card_cube_ = c.card_cube.value;
        streams_.resize(c.streams.size());
        for (const stream_spec& st : c.streams) {
            if (st.service.depends_on_concurrency()) contention_ = true;
        }
        free_streams_ = streams_.size();
        queue_.resize(64);
        if (o.timeline) {
            timeline_ = true;
            tl_from_ = o.timeline->from.in(units::s);
            tl_to_ = o.timeline->to.in(units::s);
            PERFCAST_EXPECTS(tl_to_ >= tl_from_, "simulate", "timeline.to (ms)",
                             o.timeline->to.in(units::ms), "a time >= timeline.from");
            res_.timeline.from = o.timeline->from;
            res_.timeline.to = o.timeline->to;
            for (const stream_spec& st : c.streams) {
                res_.timeline.streams.push_back({st.cube.value, st.vector.value});
            }
        }
    }

    template <ArrivalSource Source>
    serving_result run(Source& src) {
        std::optional<arrival> next = pull(src);
        constexpr double inf = std::numeric_limits<double>::infinity();
        for (;;) {
            const double t_arr = next ? next->time.in(units::s) : inf;
            double t_done = inf;
            const stream_state* st = streams_.data();
            for (std::size_t i = 0, n = streams_.size(); i < n; ++i) {
                if (st[i].busy && st[i].finish < t_done) t_done = st[i].finish;
            }
            double t = t_arr < t_done ? t_arr : t_done;
            if (deadline_ < t) t = deadline_;
            if (t == inf) break;
            advance(t);
            // Same-time order: completions, then arrivals, then dispatch.
            if (t_done <= now_) {
                for (std::size_t i = 0; i < streams_.size(); ++i) {
                    if (streams_[i].busy && streams_[i].finish <= now_) complete(i);
                }
            }
            while (next && next->time.in(units::s) <= now_) {
                enqueue(*next);
                next = pull(src);
                if (!next) end_observation();
            }
            dispatch();
            note_queue();
            if (contention_) retime();
        }
        return finish_result();
    }

private:
    struct item {
        double arrival;
        std::uint32_t request;  // slot
        int samples;
        bool split;
    };
    struct request_state {
        double arrival = 0;
        double last_start = 0;
        std::uint64_t id = 0;
        int bs = 0;
        int chunks = 0;
        int waiting = 0;  // chunks not started
        int left = 0;     // chunks not finished
    };
    struct stream_state {
        bool busy = false;
        double start = 0;
        double finish = 0;
        double dur = 0;        // duration at the current concurrency
        double work_left = 0;  // share of the batch's work left at `since`
        double since = 0;
        double noise = 1;
        std::size_t gear_index = 0;
        int at_concurrency = 0;
        std::size_t timeline_index = static_cast<std::size_t>(-1);
        std::vector<std::uint32_t> items;
    };

    template <class Source>
    std::optional<arrival> pull(Source& src) {
        std::optional<arrival> a = src.next();
        if (a) {
            const double t = a->time.in(units::s);
            if (!(t >= last_arrival_) || !is_finite(a->time)) {
                detail::precondition_failed(
                    "simulate", "arrival[" + std::to_string(arrivals_) + "].time (ms)",
                    a->time.in(units::ms),
                    "arrivals in time order, finite (the previous is at " +
                        number_text(last_arrival_ * 1e3) + " ms)");
            }
            if (a->bs < 1 || a->bs > max_batch_size) {
                detail::precondition_failed(
                    "simulate", "arrival[" + std::to_string(arrivals_) + "].bs",
                    static_cast<double>(a->bs), "a batch size in 1..1048576");
            }
            last_arrival_ = t;
        }
        return a;
    }

    void advance(double t) {
        if (observing_) {
            const double dt = t - now_;
            busy_integral_ += static_cast<double>(busy_) * dt;
            const int held = busy_cores_ < card_cube_ ? busy_cores_ : card_cube_;
            cores_integral_ += static_cast<double>(held) * dt;
            queue_integral_ += static_cast<double>(waiting_requests_) * dt;
        }
        now_ = t;
    }

    void end_observation() {
        if (observing_) {
            observing_ = false;
            obs_end_ = now_;
        }
    }

    bool in_timeline(double t) const noexcept {
        return timeline_ && t >= tl_from_ && t < tl_to_;
    }
    /// After all events at one instant: the queue's maximum and, when it changed, a timeline
    /// point (requests arriving together with a free stream never count as waiting).
    void note_queue() {
        if (observing_ && waiting_requests_ > res_.max_queue) res_.max_queue = waiting_requests_;
        if (waiting_requests_ != last_noted_queue_ && in_timeline(now_)) {
            last_noted_queue_ = waiting_requests_;
            if (res_.timeline.queue.size() < o_.timeline->max_events) {
                res_.timeline.queue.push_back({duration{now_, units::s}, waiting_requests_});
            } else {
                res_.timeline.truncated = true;
            }
        }
    }

    std::uint32_t allocate_request() {
        if (!free_slots_.empty()) {
            const std::uint32_t s = free_slots_.back();
            free_slots_.pop_back();
            return s;
        }
        requests_.emplace_back();
        return static_cast<std::uint32_t>(requests_.size() - 1);
    }

    // The queue is a ring of a power-of-two size, doubled when full.
    void push_item(const item& it) {
        if (q_size_ == queue_.size()) {
            std::vector<item> bigger(queue_.size() * 2);
            for (std::size_t k = 0; k < q_size_; ++k) bigger[k] = queued(k);
            queue_.swap(bigger);
            q_head_ = 0;
            q_mask_ = queue_.size() - 1;
        }
        queue_.data()[(q_head_ + q_size_) & q_mask_] = it;
        ++q_size_;
    }
    const item& queued(std::size_t k) const noexcept {
        return queue_.data()[(q_head_ + k) & q_mask_];
    }

    /// The split plan of a request of bs samples, computed once per bs up to 4096.
    const batch_plan& plan_of(int bs) {
        const auto i = static_cast<std::size_t>(bs);
        if (i >= plans_.size()) {
            if (bs > 4096) {
                scratch_plan_ = plan_request(c_.gears, bs);
                return scratch_plan_;
            }
            plans_.resize(i + 1);
        }
        batch_plan& p = plans_[i];
        if (p.chunks == 0) p = plan_request(c_.gears, bs);
        return p;
    }

    void enqueue(const arrival& a) {
        const std::uint64_t id = arrivals_++;
        if (id == o_.warmup) {
            observing_ = true;
            counting_batches_ = true;
            obs_start_ = now_;
        }
        if (observing_) ++observed_arrivals_;
        const batch_plan& p = plan_of(a.bs);
        const std::uint32_t slot = allocate_request();
        request_state& r = requests_[slot];
        r.arrival = now_;
        r.last_start = now_;
        r.id = id;
        r.bs = a.bs;
        r.chunks = p.chunks;
        r.waiting = p.chunks;
        r.left = p.chunks;
        for (int k = 0; k < p.chunks; ++k) {
            push_item({now_, slot, p.chunk(k).samples, p.split()});
        }
        ++waiting_requests_;
    }

    void dispatch() {
        deadline_ = std::numeric_limits<double>::infinity();
        const int max_req = c_.max_requests_per_batch;
        while (q_size_ > 0 && free_streams_ > 0) {
            int sum = 0;
            int count = 0;
            bool split = false;
            bool full = false;
            for (std::size_t k = 0; k < q_size_; ++k) {
                const item& it = queued(k);
                if (sum + it.samples > max_gear_ || (max_req > 0 && count == max_req)) {
                    full = true;
                    break;
                }
                sum += it.samples;
                ++count;
                split = split || it.split;
                if (sum == max_gear_) break;
            }
            full = full || sum == max_gear_ || (max_req > 0 && count >= max_req);
            const double deadline = queued(0).arrival + window_s_;
            if (!full && !split && now_ < deadline) {
                deadline_ = deadline;
                return;
            }
            start_batch(count, sum);
        }
    }

    void start_batch(int count, int samples) {
        std::size_t si = 0;
        while (streams_[si].busy) ++si;
        stream_state& s = streams_[si];
        const stream_spec& spec = c_.streams[si];
        s.items.clear();
        const std::uint64_t first_id = requests_[queued(0).request].id;
        for (int k = 0; k < count; ++k) {
            const item it = queued(0);
            q_head_ = (q_head_ + 1) & q_mask_;
            --q_size_;
            request_state& r = requests_[it.request];
            r.last_start = now_;
            if (--r.waiting == 0) --waiting_requests_;
            s.items.push_back(it.request);
        }
        s.busy = true;
        --free_streams_;
        ++busy_;
        busy_cores_ += spec.cube.value;
        s.gear_index = c_.gears.index_for(samples);
        s.noise = 1.0;
        if (erlang_k_ > 0) {
            double sum = 0;
            for (int k = 0; k < erlang_k_; ++k) sum += noise_.exponential();
            s.noise = sum / erlang_k_;
        }
        s.at_concurrency = busy_;
        s.dur = spec.service.seconds_at(s.gear_index, busy_) * s.noise;
        s.start = now_;
        s.since = now_;
        s.work_left = 1.0;
        s.finish = now_ + s.dur;
        if (counting_batches_) {
            ++res_.batches;
            batch_samples_ += static_cast<double>(samples);
            gear_samples_ += static_cast<double>(c_.gears[s.gear_index]);
        }
        s.timeline_index = static_cast<std::size_t>(-1);
        if (in_timeline(now_)) {
            if (res_.timeline.batches.size() < o_.timeline->max_events) {
                s.timeline_index = res_.timeline.batches.size();
                res_.timeline.batches.push_back({static_cast<int>(si), duration{now_, units::s},
                                                 duration{}, samples, c_.gears[s.gear_index],
                                                 count, busy_, first_id});
            } else {
                res_.timeline.truncated = true;
            }
        }
    }

    void complete(std::size_t si) {
        stream_state& s = streams_[si];
        s.busy = false;
        ++free_streams_;
        --busy_;
        if (o_.progress && ++batches_done_ % progress_every_batches == 0) {
            o_.progress({"simulating", served_, 0, "requests served"});
        }
        busy_cores_ -= c_.streams[si].cube.value;
        if (s.timeline_index != static_cast<std::size_t>(-1)) {
            res_.timeline.batches[s.timeline_index].end = duration{now_, units::s};
        }
        for (std::uint32_t slot : s.items) {
            request_state& r = requests_[slot];
            if (--r.left > 0) continue;
            ++served_;
            if (r.id >= o_.warmup) {
                const double lat = now_ - r.arrival;
                const double wait = r.last_start - r.arrival;
                latencies_.push_back(lat);
                const auto k = static_cast<std::size_t>(r.id - o_.warmup);
                if (k >= waits_.size()) waits_.resize(k + 1, 0.0);
                waits_[k] = wait;
                wait_sum_ += wait;
                if (wait > 0) ++waited_;
            }
            if (in_timeline(r.arrival)) {
                if (res_.timeline.requests.size() < o_.timeline->max_events) {
                    res_.timeline.requests.push_back(
                        {r.id, r.bs, r.chunks, duration{r.arrival, units::s},
                         duration{r.last_start, units::s}, duration{now_, units::s}});
                } else {
                    res_.timeline.truncated = true;
                }
            }
            free_slots_.push_back(slot);
        }
    }

    /// Re-times running batches after the number running changed: the share of work left is
    /// kept, the time for it follows the new concurrency.
    void retime() {
        for (std::size_t i = 0; i < streams_.size(); ++i) {
            stream_state& s = streams_[i];
            if (!s.busy || s.at_concurrency == busy_) continue;
            double left = s.work_left - (now_ - s.since) / s.dur;
            if (left < 0) left = 0;
            s.work_left = left;
            s.since = now_;
            s.at_concurrency = busy_;
            s.dur = c_.streams[i].service.seconds_at(s.gear_index, busy_) * s.noise;
            s.finish = now_ + left * s.dur;
        }
    }

    serving_result finish_result() {
        serving_result& r = res_;
        PERFCAST_EXPECTS(!latencies_.empty(), "simulate", "warmup",
                         static_cast<double>(o_.warmup),
                         "fewer warm-up requests than arrivals (no request was counted)");
        if (observing_) end_observation();
        const std::size_t n = latencies_.size();
        r.requests = n;
        double sum = 0;
        double mx = 0;
        for (double l : latencies_) {
            sum += l;
            if (l > mx) mx = l;
        }
        r.mean = duration{sum / static_cast<double>(n), units::s};
        r.max = duration{mx, units::s};
        r.mean_wait = duration{wait_sum_ / static_cast<double>(n), units::s};
        r.wait_share = static_cast<double>(waited_) / static_cast<double>(n);
        if (waits_.size() >= 8) {
            const std::size_t q = waits_.size() / 4;
            double first = 0;
            double last = 0;
            for (std::size_t k = 0; k < q; ++k) {
                first += waits_[k];
                last += waits_[waits_.size() - q + k];
            }
            r.wait_first_quarter = duration{first / static_cast<double>(q), units::s};
            r.wait_last_quarter = duration{last / static_cast<double>(q), units::s};
        }
        r.mean_stderr = duration{batch_means_stderr(), units::s};
        // Quantiles by successive partial sorts (O(n)) unless every latency is kept sorted.
        const double ps[4] = {0.50, 0.90, 0.99, 0.999};
        duration* outs[4] = {&r.p50, &r.p90, &r.p99, &r.p999};
        if (o_.keep_latencies) {
            std::sort(latencies_.begin(), latencies_.end());
            for (int k = 0; k < 4; ++k) {
                *outs[k] = duration{latencies_[nearest_rank(ps[k], n) - 1], units::s};
            }
            r.latencies.reserve(n);
            for (double l : latencies_) r.latencies.push_back(duration{l, units::s});
        } else {
            auto lo = latencies_.begin();
            for (int k = 0; k < 4; ++k) {
                const auto nth = latencies_.begin() +
                                 static_cast<std::ptrdiff_t>(nearest_rank(ps[k], n) - 1);
                std::nth_element(lo, nth, latencies_.end());
                *outs[k] = duration{*nth, units::s};
                lo = nth;
            }
        }
        const double span = obs_end_ - obs_start_;
        r.span = duration{span, units::s};
        if (span > 0) {
            r.qps = request_rate{static_cast<double>(observed_arrivals_ - 1) / span, units::qps};
            r.utilization = busy_integral_ / (span * static_cast<double>(streams_.size()));
            r.core_utilization = cores_integral_ / (span * static_cast<double>(card_cube_));
            r.mean_queue = queue_integral_ / span;
        }
        if (res_.batches > 0) {
            r.mean_batch = batch_samples_ / static_cast<double>(res_.batches);
            r.padding_share = (gear_samples_ - batch_samples_) / gear_samples_;
        }
        return std::move(res_);
    }

    /// Standard error of the mean latency from 32 batch means (0 below 64 latencies).
    double batch_means_stderr() const {
        constexpr std::size_t nb = 32;
        const std::size_t n = latencies_.size();
        if (n < 2 * nb) return 0.0;
        const std::size_t per = n / nb;
        double means[nb]{};
        double grand = 0;
        for (std::size_t b = 0; b < nb; ++b) {
            double s = 0;
            for (std::size_t k = b * per; k < (b + 1) * per; ++k) s += latencies_[k];
            means[b] = s / static_cast<double>(per);
            grand += means[b];
        }
        grand /= static_cast<double>(nb);
        double var = 0;
        for (double m : means) var += (m - grand) * (m - grand);
        var /= static_cast<double>(nb - 1);
        return std::sqrt(var / static_cast<double>(nb));
    }

    static std::string number_text(double v) { return detail::number_text(v); }

    const server_config& c_;
    const sim_options& o_;
    random_stream noise_{0};
    int erlang_k_ = 0;
    int max_gear_ = 0;
    double window_s_ = 0;
    int card_cube_ = 0;
    bool contention_ = false;

    double now_ = 0;
    double deadline_ = std::numeric_limits<double>::infinity();
    double last_arrival_ = -std::numeric_limits<double>::infinity();
    std::uint64_t arrivals_ = 0;
    std::uint64_t served_ = 0;        // requests completed (progress)
    std::uint64_t batches_done_ = 0;  // batches completed (progress)

    std::vector<item> queue_;
    std::size_t q_head_ = 0;
    std::size_t q_size_ = 0;
    std::size_t q_mask_ = 63;
    std::vector<batch_plan> plans_;
    batch_plan scratch_plan_{};
    std::vector<request_state> requests_;
    std::vector<std::uint32_t> free_slots_;
    std::vector<stream_state> streams_;
    std::size_t free_streams_ = 0;
    int busy_ = 0;
    int busy_cores_ = 0;
    std::size_t waiting_requests_ = 0;
    std::size_t last_noted_queue_ = 0;

    bool observing_ = false;
    bool counting_batches_ = false;  // from the first counted arrival to the end
    double obs_start_ = 0;
    double obs_end_ = 0;
    std::uint64_t observed_arrivals_ = 0;
    double busy_integral_ = 0;
    double cores_integral_ = 0;
    double queue_integral_ = 0;
    double batch_samples_ = 0;
    double gear_samples_ = 0;
    std::vector<double> latencies_;
    std::vector<double> waits_;  // per counted request, in arrival order
    double wait_sum_ = 0;
    std::uint64_t waited_ = 0;

    bool timeline_ = false;
    double tl_from_ = 0;
    double tl_to_ = 0;
    serving_result res_;
};

}  // namespace detail

/// Mean chunks per request of `dist` under `gears`: a request above the largest gear is split
/// into ceil(bs / largest gear) chunks (batching.hpp), each a queue item of its own.
[[nodiscard]] inline double mean_chunks(const gear_set& gears, const batch_distribution& dist) {
    double sum = 0;
    for (std::size_t i = 0; i < dist.bins().size(); ++i) {
        sum += dist.share(i) * plan_request(gears, dist.bins()[i].bs).chunks;
    }
    return sum;
}

/// Most chunks one Poisson simulation may queue: requests x mean chunks per request. 1e8, the
/// most requests a run takes (`perfcast whatif --requests`) when no request is split. Memory
/// is about 20 bytes per request at a stable load and at most about 100 bytes per chunk when a
/// saturated card leaves them all waiting (measured, Release: 1e7 one-chunk requests on one
/// stream, 201 MB at 1000 QPS, 1.02 GB at 1e6 QPS), so at most about 10 GB
/// (docs/whatif-serving.md, "Memory, time and progress").
inline constexpr double max_simulated_chunks = 1e8;

/// Simulates `config` serving the arrivals of `source` until every request is done.
template <ArrivalSource Source>
[[nodiscard]] serving_result simulate(const server_config& config, Source& source,
                                      const sim_options& options = {}) {
    detail::simulator sim(config, options);
    return sim.run(source);
}

/// Simulates `requests` Poisson arrivals at `qps` with batch sizes from `dist`, seeded by
/// options.seed.
[[nodiscard]] inline serving_result simulate(const server_config& config,
                                             const batch_distribution& dist, request_rate qps,
                                             std::uint64_t requests,
                                             const sim_options& options = {}) {
    PERFCAST_EXPECTS(requests >= 1, "simulate", "requests", static_cast<double>(requests),
                     "at least 1 request");
    const double chunks = static_cast<double>(requests) * mean_chunks(config.gears, dist);
    PERFCAST_EXPECTS(chunks <= max_simulated_chunks, "simulate",
                     "chunks (requests x chunks per request)", chunks,
                     "at most 1e8 chunks in one simulation (about 100 bytes each when a "
                     "saturated card leaves them all waiting): fewer requests or a larger "
                     "largest gear");
    poisson_arrivals src(qps, dist, requests, options.seed);
    if (!options.progress) return simulate(config, src, options);
    sim_options o = options;  // the same reports, with the run's request count as the total
    o.progress = [&options, requests](const progress_step& p) {
        options.progress({p.task, p.done, requests, p.unit});
    };
    return simulate(config, src, o);
}

/// One simulation per rate (the same seed at each: common random numbers).
[[nodiscard]] inline std::vector<serving_result> sweep_qps(const server_config& config,
                                                       const batch_distribution& dist,
                                                       std::span<const request_rate> rates,
                                                       std::uint64_t requests,
                                                       const sim_options& options = {}) {
    std::vector<serving_result> out;
    out.reserve(rates.size());
    for (request_rate q : rates) out.push_back(simulate(config, dist, q, requests, options));
    return out;
}

// ---- analytic approximation ---------------------------------------------------------------

/// One class of requests in the analytic model: requests of one batch size.
struct analytic_class {
    double share = 0;       // of requests
    duration offset{};      // service of its chunks on the loaded card + expected window wait
    int parallel = 1;       // chunks that queue side by side (first wave)
};

/// What the M/G/c approximation predicts.
struct analytic_result {
    request_rate qps{};
    bool stable = false;          // utilization < 1; otherwise latencies are infinite
    /// The load at which the model's utilization reaches 1: c / (E[chunks] x E[chunk service
    /// with every other stream busy]); `stable` is qps < saturation.
    request_rate saturation{};
    double utilization = 0;       // share of streams busy
    double concurrency = 0;       // mean batches running, seen by a running batch
    double wait_probability = 0;  // Erlang C: share of chunks that queue
    duration mean_wait{};         // mean queueing time of a chunk (Allen-Cunneen)
    duration mean{};
    duration p50{};
    duration p90{};
    duration p99{};
    duration p999{};
    double mean_queue = 0;  // chunks waiting (Little's law)

    /// Latency at share p of requests, p in (0, 1).
    [[nodiscard]] duration at(double p) const;

    /// The mixture behind the percentiles: a request of class i takes offset_i plus the longest
    /// of `parallel_i` independent chunk waits; its j-th chunk waits with probability
    /// chunk_wait[j - 1] (fewer than j streams free), an exponential time of rate
    /// `tail_rate_per_s`.
    std::vector<analytic_class> classes;
    std::vector<double> chunk_wait;
    double tail_rate_per_s = 0;
};

namespace detail {

/// Erlang C: probability that an arrival waits in M/M/c with offered load a (< c).
[[nodiscard]] inline double erlang_c(int c, double a) noexcept {
    double b = 1.0;  // Erlang B by the stable recursion
    for (int k = 1; k <= c; ++k) b = a * b / (static_cast<double>(k) + a * b);
    const double rho = a / static_cast<double>(c);
    return b / (1.0 - rho * (1.0 - b));
}

/// Binomial(n, p) probabilities 0..n (log space, so large n does not underflow the terms).
[[nodiscard]] inline std::vector<double> binomial_pmf(int n, double p) {
    std::vector<double> pmf(static_cast<std::size_t>(n) + 1, 0.0);
    if (p <= 0) {
        pmf.front() = 1;
        return pmf;
    }
    if (p >= 1) {
        pmf.back() = 1;
        return pmf;
    }
    const double lp = std::log(p);
    const double lq = std::log1p(-p);
    const double lgn = std::lgamma(n + 1.0);
    for (int k = 0; k <= n; ++k) {
        pmf[static_cast<std::size_t>(k)] =
            std::exp(lgn - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * lp +
                     (n - k) * lq);
    }
    return pmf;
}

/// Service time at gear index g of a batch running beside m - 1 others of its own request,
/// the other streams each busy with probability rho: E[t(g, m + Binomial(others, rho))].
[[nodiscard]] inline double loaded_seconds(const service_table& t, std::size_t g, int m,
                                           const std::vector<double>& others_pmf) {
    if (!t.depends_on_concurrency()) return t.seconds_at(g, 1);
    double s = 0;
    for (std::size_t k = 0; k < others_pmf.size(); ++k) {
        s += others_pmf[k] * t.seconds_at(g, m + static_cast<int>(k));
    }
    return s;
}

/// P(latency <= t) of the mixture.
[[nodiscard]] inline double mixture_cdf(const analytic_result& r, double t) noexcept {
    double f = 0;
    for (const analytic_class& k : r.classes) {
        const double x = t - k.offset.in(units::s);
        if (x < 0) continue;
        const double e = std::exp(-r.tail_rate_per_s * x);
        double all = 1.0;
        for (int j = 0; j < k.parallel; ++j) {
            all *= 1.0 - r.chunk_wait[static_cast<std::size_t>(j)] * e;
        }
        f += k.share * all;
    }
    return f;
}

[[nodiscard]] inline duration mixture_quantile(const analytic_result& r, double p) {
    if (!r.stable) return duration{std::numeric_limits<double>::infinity(), units::s};
    double lo = 0;
    double hi = 0;
    int most = 1;
    for (const analytic_class& k : r.classes) {
        hi = std::max(hi, k.offset.in(units::s));
        most = std::max(most, k.parallel);
    }
    if (r.tail_rate_per_s > 0) {
        // P(longest of `most` waits > x) <= most x e^(-rate x) <= 1 - p there.
        hi += std::log(most / (1.0 - p) + 1.0) / r.tail_rate_per_s;
    }
    hi = hi * (1 + 1e-9) + 1e-12;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        if (mixture_cdf(r, mid) >= p * (1.0 - rank_tolerance)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return duration{hi, units::s};
}

/// E[longest of k independent waits], wait j being 0 with probability 1 - P_j, else
/// exponential of rate theta: with y = e^(-theta x) the mean is
/// (1 / theta) x integral over [0, 1] of (1 - prod_j (1 - P_j y)) / y dy, a polynomial of degree
/// k - 1 integrated by Simpson's rule on 64 intervals (error far below the model's).
[[nodiscard]] inline double mean_max_wait(int k, std::span<const double> p, double theta) {
    if (theta <= 0) return 0;
    const auto f = [&](double y) {
        double prod = 1.0;
        double sum = 0.0;
        for (int j = 0; j < k; ++j) {
            prod *= 1.0 - p[static_cast<std::size_t>(j)] * y;
            sum += p[static_cast<std::size_t>(j)];
        }
        return y == 0.0 ? sum : (1.0 - prod) / y;
    };
    constexpr int n = 64;
    double s = f(0.0) + f(1.0);
    for (int i = 1; i < n; ++i) s += (i % 2 == 1 ? 4.0 : 2.0) * f(static_cast<double>(i) / n);
    return s / (3.0 * n) / theta;
}

/// Wait probability of the j-th chunk (j = 1..c) of a request arriving at an M/M/c system of
/// offered load a: P(fewer than j servers free) = C + sum_{n = c-j+1}^{c-1} pi_n, with
/// pi_n = (1 - C) (a^n / n!) / sum_{m < c} a^m / m!.
[[nodiscard]] inline std::vector<double> chunk_wait_probabilities(int c, double a, double cwait) {
    std::vector<double> term(static_cast<std::size_t>(c));
    double t = 1.0;
    double norm = 0.0;
    for (int n = 0; n < c; ++n) {
        if (n > 0) t *= a / n;
        term[static_cast<std::size_t>(n)] = t;
        norm += t;
    }
    std::vector<double> p(static_cast<std::size_t>(c));
    double acc = cwait;
    for (int j = 1; j <= c; ++j) {
        if (j > 1) acc += (1.0 - cwait) * term[static_cast<std::size_t>(c - j + 1)] / norm;
        p[static_cast<std::size_t>(j - 1)] = acc < 1.0 ? acc : 1.0;
    }
    return p;
}

}  // namespace detail

inline duration analytic_result::at(double p) const {
    PERFCAST_EXPECTS(p > 0 && p < 1, "analytic_result::at", "p", p, "a share in (0, 1)");
    return detail::mixture_quantile(*this, p);
}

/// M/G/c approximation of `config` at `qps` with batch sizes from `dist`; microseconds, for
/// sweeps. The simulation is the reference; docs/serving.md gives the measured gaps.
///
/// Jobs are chunks: a request of bs samples brings its plan's K chunks at once (compound
/// Poisson: arrival SCV ca^2 = E[K^2] / E[K], Whitt's QNA). Each chunk runs alone at its gear:
/// requests are not merged (conservative when a window merges small requests under load).
/// Contention: a running batch sees 1 + Binomial(c - 1, rho) batches, so its mean service time
/// is E[t(g, N)] (a fixed point in rho). Mean wait by Allen-Cunneen,
/// Wq = C(c, a) / (c mu - lambda_chunks) x (ca^2 + cs^2) / 2, exact for M/M/c, with C the
/// Erlang C probability and cs^2 including the simulation's service noise. A chunk waits
/// with probability P_j, else not: P_1 = C, and the j-th chunk of a split request also waits when
/// fewer than j streams are free (M/M/c state probabilities); a wait is exponential of mean
/// Wq / C. A request of K chunks waits for the longest of its first min(K, c) chunk waits (taken
/// independent), then runs its chunks in waves of c on the loaded card; one that does not fill the largest gear also waits out the window when
/// it finds no queue (probability 1 - C; its mean, added as a constant). Streams are taken as
/// alike (stream 0's table).
[[nodiscard]] inline analytic_result analyze(const server_config& config,
                                             const batch_distribution& dist, request_rate qps,
                                             double service_cv = 0) {
    validate(config);
    PERFCAST_EXPECTS(qps.in(units::qps) > 0 && is_finite(qps), "analyze", "qps",
                     qps.in(units::qps), "a finite rate > 0 requests per second");
    const int k_erlang = detail::erlang_shape(service_cv);
    const double noise_scv = k_erlang == 0 ? 0.0 : 1.0 / k_erlang;
    const int c = static_cast<int>(config.streams.size());
    const service_table& table = config.streams.front().service;
    const double lambda = qps.in(units::qps);

    analytic_result r;
    r.qps = qps;
    std::vector<batch_plan> plans;
    plans.reserve(dist.bins().size());
    double ek = 0;
    double ek2 = 0;
    for (std::size_t i = 0; i < dist.bins().size(); ++i) {
        plans.push_back(plan_request(config.gears, dist.bins()[i].bs));
        const double k = plans.back().chunks;
        ek += dist.share(i) * k;
        ek2 += dist.share(i) * k * k;
    }
    const double lambda_c = lambda * ek;
    {
        // At saturation every other stream is busy: the mean chunk service there.
        const std::vector<double> all_busy = detail::binomial_pmf(c - 1, 1.0);
        double es_full = 0;
        for (std::size_t i = 0; i < plans.size(); ++i) {
            for (int j = 0; j < plans[i].chunks; ++j) {
                es_full += dist.share(i) *
                           detail::loaded_seconds(
                               table, config.gears.index_for(plans[i].chunk(j).gear), 1, all_busy);
            }
        }
        r.saturation = request_rate{static_cast<double>(c) / es_full, units::qps};
    }
    // Chunk service moments with the other c - 1 streams busy with probability rho each.
    double es = 0;
    double es2 = 0;
    double rho = 0;
    for (int it = 0; it < 200; ++it) {
        const std::vector<double> others = detail::binomial_pmf(c - 1, std::min(rho, 1.0));
        es = 0;
        es2 = 0;
        for (std::size_t i = 0; i < plans.size(); ++i) {
            for (int j = 0; j < plans[i].chunks; ++j) {
                const double t = detail::loaded_seconds(
                    table, config.gears.index_for(plans[i].chunk(j).gear), 1, others);
                es += dist.share(i) * t;
                es2 += dist.share(i) * t * t;
            }
        }
        es /= ek;
        es2 /= ek;
        const double next = lambda_c * es / c;
        const bool done = std::abs(next - rho) <= 1e-12 * next;
        rho = next;
        if (done || rho >= 1.0) break;
    }
    r.utilization = rho;
    r.concurrency = 1.0 + (c - 1) * std::min(rho, 1.0);
    r.stable = rho < 1.0;
    if (!r.stable) {
        const duration inf{std::numeric_limits<double>::infinity(), units::s};
        r.mean_wait = r.mean = r.p50 = r.p90 = r.p99 = r.p999 = inf;
        r.wait_probability = 1.0;
        r.mean_queue = std::numeric_limits<double>::infinity();
        return r;
    }
    const double a = lambda_c * es;
    const double cwait = detail::erlang_c(c, a);
    const double scv_s = (es2 * (1.0 + noise_scv)) / (es * es) - 1.0;
    const double scv_a = ek2 / ek;
    const double wq = cwait / (c / es - lambda_c) * (scv_a + scv_s) / 2.0;
    r.wait_probability = cwait;
    r.mean_wait = duration{wq, units::s};
    r.tail_rate_per_s = wq > 0 ? cwait / wq : 0.0;
    r.mean_queue = lambda_c * wq;
    r.chunk_wait = detail::chunk_wait_probabilities(c, a, cwait);

    double mean = 0;
    for (std::size_t i = 0; i < plans.size(); ++i) {
        const batch_plan& p = plans[i];
        double service = 0;
        for (int first = 0; first < p.chunks; first += c) {
            const int m = std::min(p.chunks - first, c);
            const std::vector<double> others = detail::binomial_pmf(c - m, rho);
            double wave = 0;
            for (int j = 0; j < m; ++j) {
                wave = std::max(wave, detail::loaded_seconds(
                                          table, config.gears.index_for(p.chunk(first + j).gear),
                                          m, others));
            }
            service += wave;
        }
        const bool full = p.split() || p.request == config.gears.max() ||
                          config.max_requests_per_batch == 1;
        const double window = full ? 0.0 : config.window.in(units::s) * (1.0 - cwait);
        const int parallel = std::min(p.chunks, c);
        mean += dist.share(i) * (service + window +
                                 detail::mean_max_wait(parallel, r.chunk_wait, r.tail_rate_per_s));
        r.classes.push_back({dist.share(i), duration{service + window, units::s}, parallel});
    }
    r.mean = duration{mean, units::s};
    r.p50 = r.at(0.50);
    r.p90 = r.at(0.90);
    r.p99 = r.at(0.99);
    r.p999 = r.at(0.999);
    return r;
}

// ---- stability: is there a steady state at this load? ------------------------------------

/// queue_grew(): the last quarter's mean wait is above queue_growth_ratio x the first quarter's
/// and above it by more than queue_growth_floor mean service times (mean latency - mean wait).
/// A load above what the card completes grows the wait linearly through the run, from the
/// warm-up on: with the default 10 % warm-up the last quarter's mean is about 4 x the first's
/// (wait ~ t: (0.775 + 1) / 2 over (0.1 + 0.325) / 2). A stable queue's quarters scatter around
/// one mean. Both numbers are assumptions, set between those two cases and checked by the tests
/// (a stable run at 90 % of the saturation throughput stays below them; one at 110 % is far
/// above); raise them if a stable run is flagged.
inline constexpr double queue_growth_ratio = 2.0;
inline constexpr double queue_growth_floor = 4.0;

inline bool serving_result::queue_grew() const noexcept {
    const double first = wait_first_quarter.in(units::s);
    const double last = wait_last_quarter.in(units::s);
    const double service = (mean - mean_wait).in(units::s);
    return last > queue_growth_ratio * first && last - first > queue_growth_floor * service;
}

/// Capacity never goes above saturation throughput x (1 - saturation_margin). An assumption:
/// a queue's waits and their noise grow as 1 / (1 - utilization), and the time a simulation
/// needs to settle as 1 / (1 - utilization)^2 (M/M/1 relaxation time, Morse 1955), so a load
/// closer to saturation than 5 % has percentiles that depend on how long the run is (the
/// default 20000 requests are too few) and on the saturation estimate's own error (about 1 %,
/// saturation()). 5 % keeps both below the bisection's 1 % step. Calibrate by running
/// find_capacity with a loose target at 2x and 4x the requests: the capacities must agree.
inline constexpr double saturation_margin = 0.05;

/// Requests in the saturation probe (saturation()): all queued at time 0. Its throughput is
/// the mean over 80 % of them, so the packing of random request sizes into batches averages
/// over thousands of batches (the estimate's noise is far below saturation_margin).
inline constexpr std::uint64_t saturation_probe_requests = 10000;
/// ... unless its requests are split into many chunks: then it takes as many requests as fill
/// saturation_probe_chunks chunks (thousands of batches still), at least
/// saturation_probe_min_requests. All of them wait at once, so this bounds the probe's memory
/// (about 100 MB) and time: 10000 requests of 1048576 samples at a largest gear of 32 would be
/// 3.3e8 chunks, 16 GB and minutes (issue 16).
inline constexpr double saturation_probe_chunks = 1e6;
inline constexpr std::uint64_t saturation_probe_min_requests = 100;

/// Requests in the saturation probe of `dist` under `gears` (see saturation_probe_chunks).
[[nodiscard]] inline std::uint64_t saturation_probe_size(const gear_set& gears,
                                                         const batch_distribution& dist) {
    const double fit = saturation_probe_chunks / mean_chunks(gears, dist);
    if (fit >= static_cast<double>(saturation_probe_requests)) return saturation_probe_requests;
    if (fit <= static_cast<double>(saturation_probe_min_requests)) {
        return saturation_probe_min_requests;
    }
    return static_cast<std::uint64_t>(fit);
}

/// How fast a configuration completes requests when its queue never empties.
struct saturation_result {
    /// Upper bound from the service tables alone: the most samples per second any n <= streams
    /// busy streams complete, each at its most efficient gear (max over n and g of
    /// sum over n streams of g / t(g, n)), over the mean request size. No padding, every batch
    /// full: a load above it can never be served.
    request_rate bound{};
    /// Measured: every one of saturation_probe_size() requests (sizes drawn from the
    /// distribution) queued at time 0 and served by the simulation (FIFO packing into batches,
    /// splits, contention, the same as under load); completions between the 10th and the 90th
    /// percentile over the time between them (the ramp-up and the last partial batches left
    /// out), at most `bound`. The card cannot keep up with a higher Poisson load: its queue
    /// grows without end.
    request_rate throughput{};
};

namespace detail {

/// `count` requests, all at time 0, sizes drawn from `dist`.
class queued_at_once {
public:
    queued_at_once(const batch_distribution& dist, std::uint64_t count, std::uint64_t seed)
        : dist_(&dist), rng_(seed), left_(count) {}
    [[nodiscard]] std::optional<arrival> next() noexcept {
        if (left_ == 0) return std::nullopt;
        --left_;
        return arrival{duration{}, dist_->sample(rng_.uniform())};
    }

private:
    const batch_distribution* dist_;
    random_stream rng_;
    std::uint64_t left_;
};

}  // namespace detail

/// The saturation throughput of `config` with request sizes from `dist` (see
/// saturation_result); `seed` and `service_cv` as in sim_options.
[[nodiscard]] inline saturation_result saturation(const server_config& config,
                                                  const batch_distribution& dist,
                                                  std::uint64_t seed = 1, double service_cv = 0) {
    validate(config);
    saturation_result r;
    double best_samples_per_s = 0;
    for (std::size_t n = 1; n <= config.streams.size(); ++n) {
        std::vector<double> per_stream;
        per_stream.reserve(config.streams.size());
        for (const stream_spec& st : config.streams) {
            double most = 0;
            for (std::size_t g = 0; g < config.gears.size(); ++g) {
                most = std::max(most, static_cast<double>(config.gears[g]) /
                                          st.service.seconds_at(g, static_cast<int>(n)));
            }
            per_stream.push_back(most);
        }
        std::sort(per_stream.begin(), per_stream.end(), std::greater<>());
        double sum = 0;
        for (std::size_t k = 0; k < n; ++k) sum += per_stream[k];
        best_samples_per_s = std::max(best_samples_per_s, sum);
    }
    r.bound = request_rate{best_samples_per_s / dist.mean(), units::qps};

    sim_options so;
    so.seed = seed;
    so.service_cv = service_cv;
    so.keep_latencies = true;
    detail::queued_at_once src(dist, saturation_probe_size(config.gears, dist), seed);
    const serving_result s = simulate(config, src, so);
    // Every request arrived at 0: its latency is its completion time.
    // Requests complete in steps (a batch's requests together, streams in lockstep), so the
    // rate counts whole steps: from the step holding the 10th percentile to the one holding
    // the 90th, every completion at those two instants on the same side.
    const std::vector<duration>& done = s.latencies;
    const std::size_t n = done.size();
    const duration t10 = done[n / 10 - 1];
    const duration t90 = done[n - n / 10 - 1];
    const auto upto = [&](duration t) {
        return static_cast<double>(std::upper_bound(done.begin(), done.end(), t) - done.begin());
    };
    r.throughput =
        t90 > t10 ? (upto(t90) - upto(t10)) / (t90 - t10) : static_cast<double>(n) / s.max;
    // Not above the bound: what the measurement's end effects could still add is no capacity.
    if (r.throughput > r.bound) r.throughput = r.bound;
    return r;
}

/// What a load does to a configuration, judged before any percentile is reported.
enum class load_state : unsigned char {
    stable,     // below the saturation throughput, and the simulated queue did not grow
    growing,    // below the saturation throughput, but the simulated queue grew through the run
                // (queue_grew()): too close to saturation for this run length
    saturated,  // at or above the saturation throughput: no steady state; a finite run's
                // percentiles measure how long it ran, not the card
};

inline constexpr std::array<enum_entry<load_state>, 3> load_state_names{{
    {load_state::stable, "stable"},
    {load_state::growing, "queue-growing"},
    {load_state::saturated, "saturated"},
}};

static_assert(covers_enum<load_state_names>());

[[nodiscard]] constexpr std::string_view name_of(load_state s) noexcept {
    return name_in(load_state_names, s);
}

/// The state of a simulated run at `offered` load: saturated at or above `sat.throughput` (or
/// the analytic bound), growing when its queue grew, else stable.
[[nodiscard]] inline load_state classify(request_rate offered, const serving_result& run,
                                         const saturation_result& sat) noexcept {
    if (offered >= sat.throughput || offered >= sat.bound) return load_state::saturated;
    if (run.queue_grew()) return load_state::growing;
    return load_state::stable;
}

// ---- capacity -----------------------------------------------------------------------------

/// An expected-like result: a value, or why there is none (E has a `why` string).
template <class T, class E>
class outcome {
public:
    outcome(T v) : v_(std::in_place_index<0>, std::move(v)) {}  // NOLINT: implicit by design
    outcome(E e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT: implicit by design

    [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
    [[nodiscard]] explicit operator bool() const noexcept { return has_value(); }
    /// The value; throws perfcast::error carrying `why` when there is none.
    [[nodiscard]] const T& value() const {
        if (!has_value()) throw ::perfcast::error(std::get<1>(v_).why);
        return std::get<0>(v_);
    }
    /// Why there is no value (only when !has_value()).
    [[nodiscard]] const E& error() const {
        if (has_value()) throw ::perfcast::error("perfcast::outcome::error: there is a value");
        return std::get<1>(v_);
    }
    [[nodiscard]] const T& operator*() const { return value(); }
    [[nodiscard]] const T* operator->() const { return &value(); }

private:
    std::variant<T, E> v_;
};

enum class capacity_method : unsigned char { simulation, analytic };

struct capacity_options {
    /// Latency the quantile must not exceed (the TP99 target).
    duration target{};
    double quantile = 0.99;
    capacity_method method = capacity_method::simulation;
    /// Simulation: requests per evaluated load, warm-up, seed, service noise (sim_options).
    std::uint64_t requests = 20000;
    std::uint64_t warmup = 2000;
    std::uint64_t seed = 1;
    double service_cv = 0;
    /// Stop when the bracket [meets, fails] is narrower than this share of its top.
    double rel_tolerance = 0.01;
    /// Passed to every simulation of the search (sim_options::progress).
    progress_fn progress{};
};

/// What decided a capacity: the latency target, or the saturation cap.
enum class capacity_limit : unsigned char {
    latency,     // the highest stable load whose quantile meets the target (to rel_tolerance)
    saturation,  // the target is looser than saturation allows: the quantile still meets it at
                 // saturation x (1 - saturation_margin), the highest load searched
};

inline constexpr std::array<enum_entry<capacity_limit>, 2> capacity_limit_names{{
    {capacity_limit::latency, "latency"},
    {capacity_limit::saturation, "saturation"},
}};

static_assert(covers_enum<capacity_limit_names>());

[[nodiscard]] constexpr std::string_view name_of(capacity_limit l) noexcept {
    return name_in(capacity_limit_names, l);
}

/// The highest load found whose latency quantile meets the target.
struct serving_capacity {
    std::size_t index = 0;       // which candidate (best_capacity); 0 for one configuration
    request_rate qps{};          // requests per second per card
    duration latency{};          // the quantile at that load
    double utilization = 0;      // streams busy
    double core_utilization = 0; // simulation only (0 with the analytic method)
    int evaluations = 0;         // simulations or analytic evaluations spent
    /// The saturation throughput the search stayed below (saturation().throughput; with the
    /// analytic method the model's analytic_result::saturation).
    request_rate saturation{};
    /// latency: below the cap; saturation: qps = saturation x (1 - saturation_margin), the
    /// target would allow more but no steady state exists there.
    capacity_limit limit = capacity_limit::latency;
};

/// No load meets the target. `closest` is the candidate with the lowest latency quantile at the
/// lowest load, `closest_latency` that quantile.
struct no_capacity {
    std::string why;
    std::size_t closest = 0;
    duration closest_latency{};
    duration target{};
};

using capacity_result = outcome<serving_capacity, no_capacity>;

namespace detail {

inline void check_capacity_options(const capacity_options& o) {
    constexpr std::string_view where = "find_capacity";
    PERFCAST_EXPECTS(o.target.in(units::s) > 0 && is_finite(o.target), where, "target (ms)",
                     o.target.in(units::ms), "a finite latency > 0 ms");
    PERFCAST_EXPECTS(o.quantile > 0 && o.quantile < 1, where, "quantile", o.quantile,
                     "a share in (0, 1), e.g. 0.99 for TP99");
    PERFCAST_EXPECTS(o.rel_tolerance >= 1e-6 && o.rel_tolerance < 1, where, "rel_tolerance",
                     o.rel_tolerance, "a share in [1e-6, 1)");
    if (o.method == capacity_method::simulation) {
        PERFCAST_EXPECTS(o.requests > o.warmup && o.requests - o.warmup >= 100, where,
                         "requests", static_cast<double>(o.requests),
                         "at least 100 more than warmup");
    }
}

[[nodiscard]] inline std::string ms_text(duration t) {
    return number_text(std::round(t.in(units::ms) * 1000.0) / 1000.0) + " ms";
}

/// Latency quantile, utilizations, at one load; `steady` false when the run's queue grew.
struct load_point {
    duration latency{};
    double utilization = 0;
    double core_utilization = 0;
    bool steady = true;
    [[nodiscard]] bool meets(duration target) const noexcept { return steady && latency <= target; }
};

/// Bisection on the load: `eval(qps)` gives the quantile there. `floor_latency` is the quantile
/// as the load goes to 0, `guess` a load near saturation and `sat` the saturation throughput:
/// no load above sat x (1 - saturation_margin) is evaluated, so every bracket holds stable
/// loads only, and a target still met there gives that load, marked capacity_limit::saturation.
template <class Eval>
capacity_result bisect_capacity(const capacity_options& o, duration floor_latency,
                                request_rate guess, request_rate sat, Eval&& eval) {
    if (floor_latency > o.target) {
        return no_capacity{"perfcast::find_capacity: no load meets the target: the latency at " +
                               number_text(o.quantile * 100) + " % is " +
                               ms_text(floor_latency) + " even at low load, above the target " +
                               ms_text(o.target),
                           0, floor_latency, o.target};
    }
    serving_capacity best;
    best.saturation = sat;
    const double ceiling = sat.in(units::qps) * (1.0 - saturation_margin);
    int evals = 0;
    double lo = 0;  // meets (load 0 meets: floor_latency <= target)
    load_point at_lo{floor_latency, 0.0, 0.0};
    double hi = std::min(guess.in(units::qps), ceiling);
    // Grow until a load fails (merging can beat the no-merging guess), up to the ceiling.
    for (int i = 0; i < 64; ++i) {
        const load_point p = eval(request_rate{hi, units::qps});
        ++evals;
        if (!p.meets(o.target)) break;
        lo = hi;
        at_lo = p;
        if (hi >= ceiling) {
            best.qps = request_rate{ceiling, units::qps};
            best.latency = p.latency;
            best.utilization = p.utilization;
            best.core_utilization = p.core_utilization;
            best.evaluations = evals;
            best.limit = capacity_limit::saturation;
            return best;
        }
        hi = std::min(hi * 2, ceiling);
    }
    // Shrink until a load meets, when the guess already failed.
    while (lo == 0 && evals < 60) {
        const double probe = hi / 4;
        const load_point p = eval(request_rate{probe, units::qps});
        ++evals;
        if (p.meets(o.target)) {
            lo = probe;
            at_lo = p;
        } else {
            hi = probe;
        }
    }
    if (lo == 0) {
        return no_capacity{"perfcast::find_capacity: no load meets the target " +
                               ms_text(o.target) + " (even " +
                               number_text(hi) + " requests/s fails)",
                           0, floor_latency, o.target};
    }
    while (hi - lo > o.rel_tolerance * hi && evals < 200) {
        const double mid = 0.5 * (lo + hi);
        const load_point p = eval(request_rate{mid, units::qps});
        ++evals;
        if (p.meets(o.target)) {
            lo = mid;
            at_lo = p;
        } else {
            hi = mid;
        }
    }
    best.qps = request_rate{lo, units::qps};
    best.latency = at_lo.latency;
    best.utilization = at_lo.utilization;
    best.core_utilization = at_lo.core_utilization;
    best.evaluations = evals;
    return best;
}

}  // namespace detail

/// Highest QPS per card whose latency quantile meets `o.target` with Poisson arrivals of batch
/// sizes from `dist` (bisection on the simulation or the analytic model), never above
/// saturation x (1 - saturation_margin) and never at a load whose run's queue grew: a loose
/// target gives that cap, marked capacity_limit::saturation. "None meets it" when even the
/// low-load quantile (no queueing) is above the target.
[[nodiscard]] inline capacity_result find_capacity(const server_config& config,
                                                   const batch_distribution& dist,
                                                   const capacity_options& o) {
    detail::check_capacity_options(o);
    const low_load_result low = low_load(config, dist);
    const duration floor_latency = low.at(o.quantile);
    if (o.method == capacity_method::analytic) {
        // The model's own saturation load (any rate gives it: it does not depend on the load).
        const request_rate sat = analyze(config, dist, low.capacity, o.service_cv).saturation;
        return detail::bisect_capacity(o, floor_latency, low.capacity, sat, [&](request_rate q) {
            const analytic_result a = analyze(config, dist, q, o.service_cv);
            return detail::load_point{a.stable ? a.at(o.quantile) : a.mean, a.utilization, 0.0,
                                      a.stable};
        });
    }
    sim_options so;
    so.seed = o.seed;
    so.warmup = o.warmup;
    so.service_cv = o.service_cv;
    so.keep_latencies = true;
    so.progress = o.progress;
    const saturation_result sat = saturation(config, dist, o.seed, o.service_cv);
    return detail::bisect_capacity(
        o, floor_latency, low.capacity, sat.throughput, [&](request_rate q) {
            const serving_result s = simulate(config, dist, q, o.requests, so);
            return detail::load_point{s.at(o.quantile), s.utilization, s.core_utilization,
                                      !s.queue_grew()};
        });
}

/// Highest request rate at which `trace`, replayed faster or slower (its gaps scaled, its batch
/// sizes kept), meets the target. `o.requests` and `o.seed` are not used; the warm-up counts
/// trace requests.
[[nodiscard]] inline capacity_result find_capacity(const server_config& config,
                                                   std::span<const arrival> trace,
                                                   const capacity_options& o) {
    capacity_options ot = o;
    ot.requests = trace.size();
    detail::check_capacity_options(ot);
    const request_rate base = mean_rate(trace);
    trace_arrivals check(trace);  // validates the order once
    const batch_distribution dist = batch_sizes_of(trace);
    const low_load_result low = low_load(config, dist);
    sim_options so;
    so.warmup = o.warmup;
    so.seed = o.seed;
    so.service_cv = o.service_cv;
    so.keep_latencies = true;
    so.progress = o.progress;
    // The trace's sizes, queued at once: its bursts are not the saturation's business.
    const saturation_result sat = saturation(config, dist, o.seed, o.service_cv);
    return detail::bisect_capacity(
        o, low.at(o.quantile), low.capacity, sat.throughput, [&](request_rate q) {
            trace_arrivals src(trace, q / base);
            const serving_result s = simulate(config, src, so);
            return detail::load_point{s.at(o.quantile), s.utilization, s.core_utilization,
                                      !s.queue_grew()};
        });
}

/// The candidate with the highest capacity, or none meets it with the closest candidate (the
/// lowest latency quantile at low load).
[[nodiscard]] inline capacity_result best_capacity(std::span<const server_config> candidates,
                                                   const batch_distribution& dist,
                                                   const capacity_options& o) {
    PERFCAST_EXPECTS(!candidates.empty(), "best_capacity", "candidates", 0.0,
                     "at least one configuration");
    std::optional<serving_capacity> best;
    no_capacity closest;
    closest.closest_latency = duration{std::numeric_limits<double>::infinity(), units::s};
    for (std::size_t i = 0; i < candidates.size(); ++i) {
        const capacity_result r = find_capacity(candidates[i], dist, o);
        if (r) {
            if (!best || r->qps > best->qps) {
                best = *r;
                best->index = i;
            }
        } else if (r.error().closest_latency < closest.closest_latency) {
            closest = r.error();
            closest.closest = i;
        }
    }
    if (best) return *best;
    closest.why = "perfcast::best_capacity: none of the " + std::to_string(candidates.size()) +
                  " configurations meets the target " + detail::ms_text(o.target) +
                  "; the closest is candidate " + std::to_string(closest.closest) + " at " +
                  detail::ms_text(closest.closest_latency) + " (" +
                  detail::number_text(o.quantile * 100) + " % at low load)";
    return closest;
}

/// How many cards carry a traffic level.
struct card_count {
    std::int64_t cards = 0;
    request_rate per_card{};  // traffic / cards
    double load = 0;          // per_card / capacity
};

/// cards = ceil(traffic / (capacity x (1 - headroom))): headroom 0.2 keeps every card at <= 80 %
/// of its capacity. A ratio within 1e-9 of a whole number counts as that number.
[[nodiscard]] inline card_count cards_for(request_rate traffic, request_rate capacity_per_card,
                                          double headroom = 0) {
    constexpr std::string_view where = "cards_for";
    PERFCAST_EXPECTS(traffic.in(units::qps) > 0 && is_finite(traffic), where, "traffic",
                     traffic.in(units::qps), "a finite rate > 0 requests per second");
    PERFCAST_EXPECTS(capacity_per_card.in(units::qps) > 0 && is_finite(capacity_per_card),
                     where, "capacity", capacity_per_card.in(units::qps),
                     "a finite rate > 0 requests per second");
    PERFCAST_EXPECTS(headroom >= 0 && headroom < 1, where, "headroom", headroom,
                     "a share in [0, 1)");
    const double x = traffic / (capacity_per_card * (1.0 - headroom));
    PERFCAST_EXPECTS(x < 9e15, where, "traffic / capacity", x, "fewer than 9e15 cards");
    double cards = std::ceil(x * (1.0 - 1e-9));
    if (cards < 1) cards = 1;
    card_count r;
    r.cards = static_cast<std::int64_t>(cards);
    r.per_card = traffic / cards;
    r.load = r.per_card / capacity_per_card;
    return r;
}

// ---- service times from the card model ----------------------------------------------------

/// A `ServiceTime` from card.hpp: a batch of `batch` samples on an instance with core split
/// `split`, while `concurrent` batches run, takes the per-instance latency of
/// evaluate_card(chip, model, batch, concurrent instances, split). Every running batch is
/// taken to be of the same size as this one (card.hpp's instances are alike); core
/// time-sharing, HBM, L2, link and host contention come from the card model. The model's
/// nodes are not copied: they must outlive the adapter (and any table not yet built from it).
class card_service {
public:
    card_service(const chip& c, std::span<const node> model, core_split split,
                 card_params params = {})
        : chip_(&c), model_(model), split_(split), params_(params) {
        validate(split, c);
        // Open loop: a server starts the next request when one is there; the host work a
        // closed-loop stress test does between its tasks does not exist here.
        if (params_.runtime) params_.runtime->between = duration{};
        PERFCAST_EXPECTS(!model.empty(), "card_service", "model (nodes)", 0.0,
                         "at least one node");
    }
    [[nodiscard]] duration operator()(int batch, int concurrent_batches) const {
        return evaluate_card(*chip_, model_, batch, concurrent_batches, split_, params_)
            .instances()[0]
            .latency;
    }
    [[nodiscard]] const core_split& split() const noexcept { return split_; }

private:
    const chip* chip_;
    std::span<const node> model_;
    core_split split_;
    card_params params_;
};

/// A server of `streams` instances of `model` on chip `c`, each with `split`: the card's cores
/// come from the chip, service times from card_service tabulated at every gear and every
/// concurrency 1..streams. What `perfcast whatif` builds per candidate.
[[nodiscard]] inline server_config make_card_server(const chip& c, std::span<const node> model,
                                                    int streams, core_split split,
                                                    gear_set gears, duration window = {},
                                                    const card_params& params = {}) {
    uniform_server u;
    u.gears = gears;
    u.window = window;
    u.streams = streams;
    u.stream_cube = split.cube;
    u.stream_vector = split.vector;
    u.card_cube = core_count{c.cube.cores};
    u.card_vector = core_count{c.vector.cores};
    return make_server(u, card_service(c, model, split, params));
}

}  // namespace perfcast
