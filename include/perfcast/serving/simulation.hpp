// perfcast/serving/simulation.hpp: the seeded discrete-event simulation of a card serving
// requests: simulate(), sweep_qps(), mean_chunks().
//
// Past 500 lines on purpose: the simulator is one state machine (queue, streams,
// contention re-timing, the observation window, the timeline) whose parts share its state.
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
// guide §11). A request completes when its last chunk does. Random numbers: random.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "../batching.hpp"
#include "../distribution.hpp"
#include "../error.hpp"
#include "../progress.hpp"
#include "../random.hpp"
#include "../units.hpp"
#include "arrivals.hpp"
#include "result.hpp"

namespace perfcast {

// ---- the simulator ------------------------------------------------------------------------

namespace detail {

/// Nearest rank of share p among n values (1-based).
[[nodiscard]] inline std::size_t nearest_rank(double p, std::size_t n) noexcept {
    auto k =
        static_cast<std::size_t>(std::ceil(p * static_cast<double>(n) * (1.0 - rank_tolerance)));
    return k < 1 ? 1 : (k > n ? n : k);
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
                detail::precondition_failed("simulate",
                                            "arrival[" + std::to_string(arrivals_) + "].time (ms)",
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

    bool in_timeline(double t) const noexcept { return timeline_ && t >= tl_from_ && t < tl_to_; }
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
                                                 duration{}, samples, c_.gears[s.gear_index], count,
                                                 busy_, first_id});
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
        PERFCAST_EXPECTS(!latencies_.empty(), "simulate", "warmup", static_cast<double>(o_.warmup),
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
                const auto nth =
                    latencies_.begin() + static_cast<std::ptrdiff_t>(nearest_rank(ps[k], n) - 1);
                std::nth_element(lo, nth, latencies_.end());
                *outs[k] = duration{*nth, units::s};
                lo = nth;
            }
        }
        const double span = obs_end_ - obs_start_;
        r.span = duration{span, units::s};
        if (span > 0) {
            r.qps = request_rate{static_cast<double>(observed_arrivals_ - 1) / span, units::qps};
            // Shares of the span: the integrals add many intervals in doubles, whose rounding
            // can put a saturated card a few ulps past 1 (1.0000000000000064 seen); that is 1.
            // Past 1 + 1e-9 (an assumption: about 4.5e6 ulps of 1, far above the rounding of the
            // runs' ~1e5 intervals) it is no rounding and stays, for the tests to see.
            const auto share = [span](double integral, double servers) {
                const double v = integral / (span * servers);
                return v > 1.0 && v <= 1.0 + 1e-9 ? 1.0 : v;
            };
            r.utilization = share(busy_integral_, static_cast<double>(streams_.size()));
            r.core_utilization = share(cores_integral_, static_cast<double>(card_cube_));
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

}  // namespace perfcast
