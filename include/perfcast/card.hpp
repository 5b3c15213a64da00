// perfcast/card.hpp: S instances (streams) of a model on one card, each with a core split.
//
// Every instance runs the serial timeline of graph.hpp; what they share makes each one slower:
//
// Cores. Instance i may use c_i cube and v_i vector cores. When sum c_i <= cube cores (and
//   sum v_i <= vector cores) the splits are disjoint and nobody waits (guide §12). Otherwise the
//   engine is time-shared: an op holding b cores of engine E, while the other instances hold U
//   cores of E on average, runs max(1, (b + U) / N_E) times slower (processor sharing; an
//   instance's average holding is sum(cores x op latency) / its latency). With every instance
//   always on E this is the fair share N_E / sum of demands; when the others are on E only part
//   of the time it costs less. Two 24-core instances of an op that takes 100 us alone each take
//   200 us: no gain over one (guide §11: "without a core split, compute queues"), while two
//   12-core instances run side by side. AI CPU cores are never split; they are always shared.
//
// HBM bandwidth. The same rule, with bandwidth for cores: an op demands x = its HBM bytes / its
//   memory time while it moves data (at most the whole HBM); the other instances hold D on
//   average (sum of x times the stretched memory time, over their latency). When x + D exceeds
//   the chip's HBM bandwidth x hbm_efficiency, the op's memory time stretches by (x + D) / that
//   bandwidth; so the bytes moved per second never exceed it by much, and once HBM is the
//   bottleneck QPS = bandwidth / HBM bytes per inference. HBM bytes: an op's cold bytes (what
//   goes to HBM for one instance alone: in the inference's order, l2_sequence.hpp, its reads not
//   found and the writes that reach HBM; alone, a gather's table rows not in its hot share),
//   plus the L2 misses below.
//
// L2. An instance's working set W is the sum of its nodes' footprints (bytes written, inputs
//   that outlive the inference, inputs copied in; graph.hpp). While the instances' W together
//   fit in L2, warm traffic (everything but the cold bytes) is served by L2: the regime of
//   cost.hpp, so one instance alone is exactly its serial latency. Past L2 (guide §11: "past a
//   stream count, streams evict each other's cache") a share m of the warm traffic misses:
//   m = 1 - min(1, L2 / sum(W)) / min(1, L2 / W), the hit share of all instances together
//   (with memory_rule::copies shared, sum(W) holds the weights once, not once per instance),
//   relative to that of one instance alone (whose own misses cost.hpp, or a measured anchor,
//   already prices), so one instance alone is its serial latency whatever its W. A miss is
//   HBM traffic (m x warm bytes join the op's HBM demand above), and the op's memory time
//   moves a share m of the way from cost.hpp's time to the time cost.hpp gives an op whose
//   inputs do not fit in L2 (streamed through HBM, capped by its bandwidth).
//
// Host link. A transfer holds the whole link while it streams; it streams (1 + D / rate) times
//   slower when the other instances hold D of the link in that direction on average. The
//   per-transfer cost is not shared.
//
// Host CPU. By default each instance has its own host thread (no contention). With
//   `host_threads` = H, a host dispatch stretches by max(1, (1 + U) / H), U the other instances'
//   average number of busy host threads.
//
// Chips. A card may carry several chips (`card_params::chips`; an Atlas 300I Duo two 310Ps), each
//   a device of its own: its cores, HBM, L2 and the runtime's device-wide lock are shared only
//   by the instances placed on it (instance_group::chip), while the card's host link and host
//   threads are shared by all. `evaluate_card(c, nodes, batch, streams, split, p)` places the
//   streams as spread_over_chips does. The card's QPS sums its chips'; its utilizations are
//   over all its chips' cores and HBM.
//
// "The others demand on average" is a mean-field (Bard-Schweitzer) approximation: the others'
// demands are those of the configuration itself, so they are solved together with the
// latencies by fixed-point iteration from "every instance alone" (about 9 rounds on the default
// sweep, with Aitken's extrapolation every third round; damped after 50), until no latency
// moves by more than `tolerance`. In saturation it keeps the total demand of a resource at its
// capacity, which is the regime QPS is judged in. One instance alone is exactly its serial
// latency. Known limit (docs/model.md, "Limitations"): a slower host can, for rare models, predict
// a lower card latency.
//
// Card figures (guide §1): avg_latency is the mean latency over the requests served at saturation,
// where instance i serves 1 / latency_i requests per unit time: avg = S / sum(1 / latency_i) (the
// plain latency when all instances are alike). Then, exactly as computed and reported:
//   qps = 1000 / avg_cycle.in(ms) x S          throughput = qps x batch  (samples / s)
// which also equals sum over instances of 1 / cycle_i, a cycle being the latency plus the host
// work between tasks (runtime.hpp's `between`); without it, 1000 / avg_latency.in(ms) x S.
//
// Past 500 lines on purpose: solve_card (about 390 lines) is one fixed point over what instances
// share (cores, HBM, L2, link, host), whose passes share their state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "chip.hpp"
#include "cost.hpp"
#include "counts.hpp"
#include "device_memory.hpp"
#include "enum_table.hpp"
#include "error.hpp"
#include "graph.hpp"
#include "link.hpp"
#include "runtime.hpp"
#include "units.hpp"

namespace perfcast {

/// `count` instances with the same split, on chip `chip` of the card (0 .. card_params::chips
/// - 1; 0 on a card of one chip).
struct instance_group {
    core_split split{};
    stream_count count{1};
    int chip = 0;
    [[nodiscard]] friend constexpr bool operator==(const instance_group&,
                                                   const instance_group&) = default;
};

struct card_params {
    graph_params graph{};
    /// Host threads dispatching for the card; 0: one per instance.
    int host_threads = 0;
    /// Chips on the card, each a device with its own cores, HBM and L2, all behind the card's one
    /// host link and host threads: 2 for an Atlas 300I Duo (two 310Ps on one PCIe 4.0 x16
    /// card: Huawei's product material, as ComputerBase and Gamers Nexus quote it). The chip
    /// given to evaluate_card is each one's preset.
    int chips = 1;
    /// The host and runtime path around the kernels (runtime.hpp); none: kernels and transfer
    /// nodes only, as graph.hpp times them.
    std::optional<runtime_path> runtime{};
    /// The solution stops when no instance's latency moves by more than this share.
    double tolerance = 1e-7;
    int max_iterations = 500;
    /// How instances hold the card's memory (device_memory.hpp): read by the sweeps, which rank
    /// a deployment that does not fit last, and by the L2 model (shared weights are one copy in
    /// the instances' working sets).
    memory_rule memory{};
    [[nodiscard]] friend constexpr bool operator==(const card_params&, const card_params&) = default;
};

constexpr const card_params& validate(const card_params& p) {
    constexpr std::string_view where = "validate(card_params)";
    validate(p.graph.model);
    if (p.runtime) validate(*p.runtime);
    validate(p.memory);
    PERFCAST_EXPECTS(p.host_threads >= 0, where, "host_threads",
                     static_cast<double>(p.host_threads), ">= 0 (0: one per instance)");
    PERFCAST_EXPECTS(p.chips >= 1 && p.chips <= max_card_chips, where, "chips",
                     static_cast<double>(p.chips), "1 to 8 chips on the card");
    PERFCAST_EXPECTS(p.tolerance > 0 && p.tolerance < 1, where, "tolerance", p.tolerance,
                     "a relative tolerance in (0, 1)");
    PERFCAST_EXPECTS(p.max_iterations >= 1, where, "max_iterations",
                     static_cast<double>(p.max_iterations), ">= 1");
    return p;
}

/// What limits the card: the largest share of the instances' time (compute: cube, vector and
/// AI CPU op time whose op is compute- or head-bound; memory: op time whose op is memory-bound;
/// host: bubbles and the runtime path's host and buffer steps; link: transfers and copies).
enum class card_bound : unsigned char { compute, memory, host, link };

inline constexpr std::array<enum_entry<card_bound>, 4> card_bound_names{{
    {card_bound::compute, "compute"},
    {card_bound::memory, "memory"},
    {card_bound::host, "host"},
    {card_bound::link, "link"},
}};
static_assert(covers_enum<card_bound_names>());

[[nodiscard]] constexpr std::string_view name_of(card_bound b) noexcept {
    return name_in(card_bound_names, b);
}

/// One group of identical instances under load.
struct instance_result {
    core_split split{};
    int count = 0;
    int chip = 0;         // instance_group::chip
    duration latency{};   // one inference, all instances running: device+bubbles+aicpu+transfer,
                          // plus the runtime path's steps when there is one (steps.task())
    duration device{};    // AI Core op time (stretched)
    duration bubbles{};
    duration aicpu{};
    duration transfer{};
    duration compute{};   // op time in compute- or head-bound ops (AI CPU included)
    duration memory{};    // op time in memory-bound ops
    data_size working_set{};
    double max_core_stretch = 1;  // largest core time-sharing factor seen on an op
    double max_hbm_stretch = 1;   // largest HBM sharing factor seen on an op
    /// With a runtime path: every step (runtime.hpp); steps.device = device + aicpu + bubbles.
    task_times steps{};
    duration window{};    // what a stress test times (runtime_path::window); else latency
    duration cycle{};     // one turn of a closed loop: latency + between; else latency
    [[nodiscard]] friend constexpr bool operator==(const instance_result&,
                                                   const instance_result&) = default;
};

struct card_result {
    static constexpr std::size_t max_groups = 16;

    std::int64_t batch = 0;
    int streams = 0;
    int chips = 1;  // card_params::chips
    std::array<instance_result, max_groups> groups{};
    std::size_t group_count = 0;

    // Closed loop (each instance runs its tasks back to back, a stress test): instance i
    // finishes count_i / cycle_i tasks per second. Means are over the tasks served.
    duration avg_latency{};  // mean task latency (prepare .. post; the kernels alone without
                             // a runtime path): S / sum(1 / latency_i) when cycle = latency
    duration avg_window{};   // mean of what the stress test times (= avg_latency by default)
    duration avg_cycle{};    // S / sum(count_i / cycle_i)
    double qps = 0;          // 1000 / avg_cycle.in(units::ms) x streams (the closed loop's rate;
                             // = 1000 / avg_latency x S when nothing runs between tasks)
    double throughput = 0;   // qps x batch, samples per second
    bool runtime_path = false;  // the runtime path was modeled (card_params::runtime)
    step_set window{step_set::task()};  // what avg_window covers

    double cube_utilization = 0;    // busy cube core cycles / available (guide §2's ratio;
                                    // of every chip's cores)
    double vector_utilization = 0;  // the same for the vector cores
    double aicpu_utilization = 0;
    double hbm_utilization = 0;     // HBM bytes per second / (bandwidth x hbm_efficiency x
                                    // chips)
    double link_utilization = 0;    // busier direction: bytes per second / achievable rate
    double host_utilization = 0;    // host dispatch time per second / host threads
    data_size working_set{};        // sum over instances
    double l2_miss = 0;             // share of warm traffic that misses L2 beyond one instance
                                    // alone (the largest over the groups)
    bool cube_shared = false;       // sum of cube splits > cube cores (on some chip):
                                    // time-shared
    bool vector_shared = false;
    card_bound bound = card_bound::compute;
    int passes = 0;          // timeline walks the solution took (groups x rounds)
    bool converged = false;  // settled within card_params::tolerance

    [[nodiscard]] constexpr std::span<const instance_result> instances() const noexcept {
        return {groups.data(), group_count};
    }
    [[nodiscard]] friend constexpr bool operator==(const card_result&, const card_result&) = default;
};

namespace detail {

/// Average demands of one instance, the state of the fixed point.
struct demand {
    double cube = 0;     // cores held on average
    double vector = 0;
    double aicpu = 0;
    double hbm = 0;      // bandwidth held on average (B/s): demand x time moving / latency
    double link_in = 0;  // the same for the host link, host -> device
    double link_out = 0;
    double host = 0;     // host threads busy on average
    double lock = 0;     // presence at the device-wide lock (runtime path), waiting included
};

struct card_pass {
    instance_result r{};
    demand d{};
    double busy_cube = 0;  // core-seconds actually working per inference
    double busy_vector = 0;
    double busy_aicpu = 0;
    double hbm_bytes = 0;  // bytes per inference (for utilization)
    double link_in_bytes = 0;
    double link_out_bytes = 0;
    double hbm_held = 0;   // B/s x s per inference (for the demand)
    double link_in_held = 0;
    double link_out_held = 0;
    double host_time = 0;  // s per task on a host thread (stretched by sharing: the demand)
    double host_work = 0;  // s per task of host CPU work (for utilization)
    double lock_time = 0;  // s per task at the device lock, waiting included
};

[[nodiscard]] constexpr double dmax(double a, double b) noexcept { return a < b ? b : a; }
[[nodiscard]] constexpr double dmin(double a, double b) noexcept { return a < b ? a : b; }

/// Solves the card. `eval(g, i)` returns node i's node_eval for group g (alone on the chip).
template <class Eval>
[[nodiscard]] constexpr card_result solve_card(const chip& c, std::size_t node_count,
                                               std::int64_t batch,
                                               std::span<const instance_group> groups,
                                               const card_params& p, Eval&& eval) {
    constexpr std::string_view where = "evaluate_card";
    validate(p);
    PERFCAST_EXPECTS(batch >= 1, where, "batch", static_cast<double>(batch), "a batch size >= 1");
    PERFCAST_EXPECTS(!groups.empty(), where, "instances", 0.0, "at least one instance");
    PERFCAST_EXPECTS(groups.size() <= card_result::max_groups, where, "instance groups",
                     static_cast<double>(groups.size()),
                     "at most 16 instance groups (a split on a chip each)");
    card_result out;
    out.batch = batch;
    out.chips = p.chips;
    out.group_count = groups.size();
    for (std::size_t i = 0; i < groups.size(); ++i) {
        const instance_group& g = groups[i];
        PERFCAST_EXPECTS(g.count.value >= 1, where, "streams", static_cast<double>(g.count.value),
                         "at least 1 stream (instance)");
        PERFCAST_EXPECTS(g.chip >= 0 && g.chip < p.chips, where,
                         "groups[" + std::to_string(i) + "].chip", static_cast<double>(g.chip),
                         "a chip of the card: 0 to " + std::to_string(p.chips - 1) +
                             " (card_params::chips = " + std::to_string(p.chips) + ")");
        validate(g.split, c);
        out.streams += g.count.value;
    }
    // groups[g]'s chip, as an index.
    const auto chip_of = [&](std::size_t g) { return static_cast<std::size_t>(groups[g].chip); };

    // Working sets (the L2 miss share follows from them), and of each the weights.
    std::array<data_size, card_result::max_groups> ws{};
    std::array<data_size, card_result::max_groups> weights{};
    for (std::size_t g = 0; g < groups.size(); ++g) {
        for (std::size_t i = 0; i < node_count; ++i) {
            const node_eval& e = eval(g, i);
            ws[g] += e.footprint;
            weights[g] += e.persistent;
        }
    }
    const data_size l2 = l2_resident_size(c.memory);

    const double hbm_rate = (c.memory.hbm_bandwidth * p.graph.model.hbm_efficiency).in(units::Bps);
    const pcie_link link = link_for(c, p.graph);
    const double link_rate = link.achievable().in(units::Bps);
    const runtime_path* rt = p.runtime ? &*p.runtime : nullptr;
    const bool per_op = rt != nullptr && rt->launch == launch_mode::per_op;
    out.runtime_path = rt != nullptr;
    if (rt) out.window = rt->window;
    const double overlap = p.graph.model.overlap;
    const double n_cube = static_cast<double>(c.cube.cores);
    const double n_vector = static_cast<double>(c.vector.cores);
    const double n_aicpu = static_cast<double>(c.aicpu.cores);
    const double n_chips = static_cast<double>(p.chips);
    const double threads = static_cast<double>(p.host_threads);
    const double inv_cube = 1.0 / n_cube;
    const double inv_vector = 1.0 / n_vector;
    const double inv_aicpu = n_aicpu > 0 ? 1.0 / n_aicpu : 0.0;

    // One instance of group g in a population whose other instances demand `others` on average,
    // with a share `miss` of warm traffic missing L2; cube_shared / vector_shared: whether the
    // population's splits add up to more cores than the chip has.
    auto run_pass = [&](std::size_t g, const demand& others, double miss, bool cube_shared,
                        bool vector_shared) {
        card_pass ps;
        ps.r.split = groups[g].split;
        ps.r.count = groups[g].count.value;
        ps.r.chip = groups[g].chip;
        ps.r.working_set = ws[g];
        const double host_stretch = threads > 0 ? dmax(1.0, (1.0 + others.host) / threads) : 1.0;
        copy_set copies_in;
        copy_set copies_out;
        ps.r.bubbles = walk_timeline(node_count, [&](std::size_t i) {
            const node_eval& e = eval(g, i);  // a reference, or a temporary kept alive
            timed_node t;
            if (rt && e.is_transfer()) {  // a copy step of the runtime path, not on the stream
                copy_set& cs = e.direction == transfer_dir::to_device ? copies_in : copies_out;
                ++cs.tensors;
                cs.bytes += e.link_bytes;
                return t;
            }
            t.mode = e.mode;
            duration host_time = e.host_time;
            if (per_op && t.mode == dispatch::graph && !e.is_transfer()) {
                t.mode = dispatch::host;  // launched op by op: the chip's host dispatch time
                host_time = rt->op_launch ? *rt->op_launch : c.overhead.host_dispatch;
            }
            if (t.mode != dispatch::graph) {
                t.host = host_stretch == 1.0 ? host_time : host_time * host_stretch;
                ps.host_time += t.host.in(units::s);
                ps.host_work += host_time.in(units::s);
            }
            if (e.is_transfer()) {
                const bool in = e.direction == transfer_dir::to_device;
                const double busy = in ? others.link_in : others.link_out;
                const duration stream = busy > 0 && link_rate > 0
                                            ? e.link_stream * (1.0 + busy / link_rate)
                                            : e.link_stream;
                t.device = stream == e.link_stream ? e.cost.latency : e.link_fixed + stream;
                (in ? ps.link_in_bytes : ps.link_out_bytes) += e.link_bytes.in(units::B);
                (in ? ps.link_in_held : ps.link_out_held) += link_rate * stream.in(units::s);
                ps.r.transfer += t.device;
                return t;
            }
            const double b = static_cast<double>(e.cost.cores);
            double s_core = 1.0;
            if (e.eng == engine::cube) {
                if (cube_shared) s_core = dmax(1.0, (b + others.cube) * inv_cube);
            } else if (e.eng == engine::vector) {
                if (vector_shared) s_core = dmax(1.0, (b + others.vector) * inv_vector);
            } else if (n_aicpu > 0) {
                s_core = dmax(1.0, (b + others.aicpu) * inv_aicpu);
            }
            // L2 misses: the missed share of the warm bytes is HBM traffic, and moves as
            // cost.hpp moves an op whose inputs do not fit in L2 (streamed through HBM).
            double hbm_bytes = e.cold.in(units::B);
            duration mem_t = e.cost.memory;
            if (miss > 0) {
                hbm_bytes += miss * e.warm.in(units::B);
                mem_t = e.cost.memory + (e.memory_streamed - e.cost.memory) * miss;
            }
            // HBM sharing: the op alone demands x (at most the whole HBM: beyond that cost.hpp
            // has it served by L2); it stretches when x and the others' demand exceed HBM.
            double s_hbm = 1.0;
            double x = 0;
            if (hbm_bytes > 0 && hbm_rate > 0 && mem_t > duration{}) {
                x = dmin(hbm_bytes / mem_t.in(units::s), hbm_rate);
                if (x + others.hbm > hbm_rate) s_hbm = (x + others.hbm) / hbm_rate;
            }
            duration lat = e.cost.latency;
            duration comp = e.cost.compute;
            duration mem = e.cost.memory;
            duration head = e.cost.head;
            if (s_core != 1.0 || s_hbm != 1.0 || mem_t != e.cost.memory) {
                head = e.cost.head * s_core;
                comp = e.cost.compute * s_core;
                mem = mem_t * dmax(s_core, s_hbm);
                const duration body =
                    (comp < mem ? mem : comp) + (1.0 - overlap) * (comp < mem ? comp : mem);
                lat = head + body;
                ps.r.max_core_stretch = dmax(ps.r.max_core_stretch, s_core);
                ps.r.max_hbm_stretch = dmax(ps.r.max_hbm_stretch, s_hbm);
            }
            ps.hbm_bytes += hbm_bytes;
            ps.hbm_held += x * mem.in(units::s);
            const double held = b * lat.in(units::s);
            const double busy = s_core == 1.0 ? held : held / s_core;
            if (e.eng == engine::cube) {
                ps.d.cube += held;
                ps.busy_cube += busy;
                ps.r.device += lat;
            } else if (e.eng == engine::vector) {
                ps.d.vector += held;
                ps.busy_vector += busy;
                ps.r.device += lat;
            } else {
                ps.d.aicpu += held;
                ps.busy_aicpu += busy;
                ps.r.aicpu += lat;
            }
            if (mem >= comp && mem >= head) {
                ps.r.memory += lat;
            } else {
                ps.r.compute += lat;
            }
            t.device = lat;
            return t;
        });
        ps.r.latency = ps.r.device + ps.r.aicpu + ps.r.transfer + ps.r.bubbles;
        ps.r.window = ps.r.latency;
        ps.r.cycle = ps.r.latency;
        if (rt) {
            runtime_contention k;
            k.host_stretch = host_stretch;
            k.lock_others = others.lock;
            if (link_rate > 0) {
                k.link_in_stretch = 1.0 + others.link_in / link_rate;
                k.link_out_stretch = 1.0 + others.link_out / link_rate;
            }
            task_times st = runtime_steps(*rt, copies_in, copies_out, link.per_transfer,
                                          link.achievable(), k);
            st.device = ps.r.latency;
            ps.r.steps = st;
            ps.r.transfer = st.copy_in + st.copy_out;
            ps.r.latency = st.task();
            ps.r.window = st.in(rt->window);
            ps.r.cycle = st.cycle();
            ps.host_time += st.host_busy.in(units::s);
            ps.host_work += st.host_work.in(units::s);
            ps.lock_time = st.lock_held.in(units::s);
            ps.link_in_bytes += copies_in.bytes.in(units::B);
            ps.link_out_bytes += copies_out.bytes.in(units::B);
            ps.link_in_held += link_rate * st.stream_in.in(units::s);
            ps.link_out_held += link_rate * st.stream_out.in(units::s);
        }
        const double l = ps.r.cycle.in(units::s);
        if (l > 0) {
            ps.d.cube /= l;
            ps.d.vector /= l;
            ps.d.aicpu /= l;
            ps.d.hbm = ps.hbm_held / l;
            ps.d.link_in = ps.link_in_held / l;
            ps.d.link_out = ps.link_out_held / l;
            ps.d.host = ps.host_time / l;
            ps.d.lock = ps.lock_time / l;
        }
        return ps;
    };

    // The others' average demands are the unknowns: start from none (every instance alone),
    // walk each group's timeline with the demands of the last round, repeat until no latency
    // moves by more than `tolerance` (damped after 50 rounds, in case it oscillates).
    // With weights shared (memory_rule::copies), the instances' working sets hold one copy of
    // them: the largest group's, every group running the same model. Per chip: each has its L2
    // and its cores.
    const bool shared_weights = p.memory.copies == weight_copies::shared;
    std::array<data_size, max_card_chips> total_ws{};
    std::array<data_size, max_card_chips> shared_copy{};
    std::array<long long, max_card_chips> cube_claims{};
    std::array<long long, max_card_chips> vector_claims{};
    std::array<bool, max_card_chips> used{};  // the chip runs an instance
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const std::size_t j = chip_of(g);
        used[j] = true;
        const auto k = static_cast<double>(groups[g].count.value);
        total_ws[j] += shared_weights ? (ws[g] - weights[g]) * k : ws[g] * k;
        if (weights[g] > shared_copy[j]) shared_copy[j] = weights[g];
        cube_claims[j] +=
            static_cast<long long>(groups[g].count.value) * groups[g].split.cube.value;
        vector_claims[j] +=
            static_cast<long long>(groups[g].count.value) * groups[g].split.vector.value;
    }
    std::array<bool, max_card_chips> cube_shared{};
    std::array<bool, max_card_chips> vector_shared{};
    for (std::size_t j = 0; j < static_cast<std::size_t>(p.chips); ++j) {
        if (shared_weights && used[j]) total_ws[j] += shared_copy[j];
        out.working_set += total_ws[j];
        cube_shared[j] = cube_claims[j] > c.cube.cores;
        vector_shared[j] = vector_claims[j] > c.vector.cores;
        out.cube_shared = out.cube_shared || cube_shared[j];
        out.vector_shared = out.vector_shared || vector_shared[j];
    }
    // L2 misses beyond those of one instance alone, whose L2 behaviour cost.hpp (or a measured
    // anchor) already prices: the hit share of all instances of its chip together,
    // min(1, L2 / sum(W)), relative to the hit share of one instance of the group alone,
    // min(1, L2 / W).
    std::array<double, card_result::max_groups> miss{};
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const data_size on_chip = total_ws[chip_of(g)];
        if (!(l2 > data_size{}) || !(on_chip > l2)) continue;
        const double hit_alone = ws[g] > l2 ? l2 / ws[g] : 1.0;
        miss[g] = dmax(0.0, 1.0 - (l2 / on_chip) / hit_alone);
        out.l2_miss = dmax(out.l2_miss, miss[g]);
    }

    std::array<demand, card_result::max_groups> state{};
    std::array<card_pass, card_result::max_groups> pass{};
    struct history {
        demand prev{};
        demand prev2{};
    };
    std::array<history, card_result::max_groups> past{};
    for (int it = 1; it <= p.max_iterations; ++it) {
        // The demands on each chip (cores, HBM, the device lock) and on the card (link, host).
        std::array<demand, max_card_chips> total{};
        demand card{};
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const auto k = static_cast<double>(groups[g].count.value);
            demand& on = total[chip_of(g)];
            on.cube += k * state[g].cube;
            on.vector += k * state[g].vector;
            on.aicpu += k * state[g].aicpu;
            on.hbm += k * state[g].hbm;
            on.lock += k * state[g].lock;
            card.link_in += k * state[g].link_in;
            card.link_out += k * state[g].link_out;
            card.host += k * state[g].host;
        }
        bool settled = it > 1;
        for (std::size_t g = 0; g < groups.size(); ++g) {
            const demand& own = state[g];
            const demand& on = total[chip_of(g)];
            const demand others{on.cube - own.cube,         on.vector - own.vector,
                                on.aicpu - own.aicpu,       on.hbm - own.hbm,
                                card.link_in - own.link_in, card.link_out - own.link_out,
                                card.host - own.host,       on.lock - own.lock};
            const duration before = pass[g].r.cycle;
            pass[g] =
                run_pass(g, others, miss[g], cube_shared[chip_of(g)], vector_shared[chip_of(g)]);
            const duration l = pass[g].r.cycle;
            if (abs(l - before) > l * p.tolerance) settled = false;
        }
        out.passes += static_cast<int>(groups.size());
        // One instance alone waits for no one: the first walk is exact.
        if (settled || out.streams == 1) {
            out.converged = true;
            break;
        }
        const double damping = it > 50 ? 0.5 : 1.0;
        // Every third round (while undamped), Aitken's extrapolation of each demand: the
        // rounds approach the fixed point geometrically from one side, and the extrapolation
        // jumps most of the way. Taken only where the last two steps shrink with the same sign;
        // the next round's walk then checks it like any other guess.
        const bool extrapolate = damping == 1.0 && it % 3 == 0;
        for (std::size_t g = 0; g < groups.size(); ++g) {
            demand& st = state[g];
            const demand& nw = pass[g].d;
            auto step = [&](double& x, double next, double& prev, double& prev2) {
                double v = x + damping * (next - x);
                if (extrapolate) {
                    const double d1 = v - prev;   // last step
                    const double d0 = prev - prev2;  // the one before
                    if (d1 != 0 && d0 != 0 && (d1 > 0) == (d0 > 0) && (d1 > 0 ? d1 < d0 : d1 > d0)) {
                        const double aitken = v - d1 * d1 / (d1 - d0);
                        if (aitken >= 0 && aitken == aitken) v = aitken;
                    }
                }
                prev2 = prev;
                prev = v;
                x = v;
            };
            history& h = past[g];
            step(st.cube, nw.cube, h.prev.cube, h.prev2.cube);
            step(st.vector, nw.vector, h.prev.vector, h.prev2.vector);
            step(st.aicpu, nw.aicpu, h.prev.aicpu, h.prev2.aicpu);
            step(st.hbm, nw.hbm, h.prev.hbm, h.prev2.hbm);
            step(st.link_in, nw.link_in, h.prev.link_in, h.prev2.link_in);
            step(st.link_out, nw.link_out, h.prev.link_out, h.prev2.link_out);
            step(st.host, nw.host, h.prev.host, h.prev2.host);
            step(st.lock, nw.lock, h.prev.lock, h.prev2.lock);
        }
    }

    // Card figures from the last pass. Instance i completes count_i / cycle_i tasks per second
    // (cycle = latency without a runtime path).
    double rate = 0;  // requests per second
    double latency_sum = 0, window_sum = 0;  // task-weighted sums, s x requests / s
    double busy_cube = 0, busy_vector = 0, busy_aicpu = 0, hbm = 0, link_in = 0, link_out = 0;
    double host = 0, t_compute = 0, t_memory = 0, t_host = 0, t_link = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const card_pass& ps = pass[g];
        out.groups[g] = ps.r;
        const double n = static_cast<double>(groups[g].count.value);
        const double l = ps.r.cycle.in(units::s);
        rate += n / l;
        latency_sum += n * ps.r.latency.in(units::s) / l;
        window_sum += n * ps.r.window.in(units::s) / l;
        busy_cube += n * ps.busy_cube / l;
        busy_vector += n * ps.busy_vector / l;
        busy_aicpu += n * ps.busy_aicpu / l;
        hbm += n * ps.hbm_bytes / l;
        link_in += n * ps.link_in_bytes / l;
        link_out += n * ps.link_out_bytes / l;
        host += n * ps.host_work / l;
        t_compute += n * ps.r.compute.in(units::s) / l;
        t_memory += n * ps.r.memory.in(units::s) / l;
        const task_times& st = ps.r.steps;
        const duration host_steps = st.prepare + st.buffers + st.launch + st.sync + st.post +
                                    st.between;
        t_host += n * (ps.r.bubbles + host_steps).in(units::s) / l;
        t_link += n * ps.r.transfer.in(units::s) / l;
    }
    const double s_count = static_cast<double>(out.streams);
    out.avg_cycle = groups.size() == 1 ? pass[0].r.cycle : duration{s_count / rate, units::s};
    if (rt) {
        out.avg_latency = groups.size() == 1 ? pass[0].r.latency
                                             : duration{latency_sum / rate, units::s};
        out.avg_window = groups.size() == 1 ? pass[0].r.window
                                            : duration{window_sum / rate, units::s};
    } else {
        out.avg_latency = out.avg_cycle;  // the same number, bit for bit
        out.avg_window = out.avg_cycle;
    }
    out.qps = 1000.0 / out.avg_cycle.in(units::ms) * s_count;
    out.throughput = out.qps * static_cast<double>(batch);
    out.cube_utilization = busy_cube / (n_cube * n_chips);
    out.vector_utilization = busy_vector / (n_vector * n_chips);
    out.aicpu_utilization = n_aicpu > 0 ? busy_aicpu / (n_aicpu * n_chips) : 0.0;
    out.hbm_utilization = hbm_rate > 0 ? hbm / (hbm_rate * n_chips) : 0.0;
    out.link_utilization = link_rate > 0 ? dmax(link_in, link_out) / link_rate : 0.0;
    out.host_utilization = host / (threads > 0 ? threads : s_count);
    out.bound = card_bound::compute;
    double best = t_compute;
    if (t_memory > best) {
        best = t_memory;
        out.bound = card_bound::memory;
    }
    if (t_host > best) {
        best = t_host;
        out.bound = card_bound::host;
    }
    if (t_link > best) out.bound = card_bound::link;
    return out;
}

}  // namespace detail

/// Instances of `nodes` on chip `c` at batch `batch`, in groups of a split on a chip each
/// (instance_group; at most card_result::max_groups).
[[nodiscard]] constexpr card_result evaluate_card(const chip& c, std::span<const node> nodes,
                                                  batch_size batch,
                                                  std::span<const instance_group> groups,
                                                  const card_params& p = {}) {
    PERFCAST_EXPECTS(batch.value >= 1, "evaluate_card", "batch", static_cast<double>(batch.value),
                     "a batch size >= 1");
    // No node: no latency to divide by (QPS would be infinite), as sweep says.
    PERFCAST_EXPECTS(!nodes.empty(), "evaluate_card", "nodes", 0.0,
                     "a model with at least one node");
    for (const instance_group& g : groups) validate(g.split, c);
    if (std::is_constant_evaluated()) {
        return detail::with_contexts(
            c, nodes, batch.value, p.graph, [&](std::span<const l2_context> known) {
                return detail::solve_card(
                    c, nodes.size(), batch.value, groups, p, [&](std::size_t g, std::size_t i) {
                        return evaluate_node(
                            c, nodes[i], batch, groups[g].split, p.graph,
                            detail::context_of(c, nodes, batch.value, p.graph, known, i));
                    });
            });
    }
    // At run time evaluate every node once per distinct split (groups of one split on several
    // chips share them: a node's cost does not depend on its chip's neighbours).
    const std::vector<l2_context> contexts = l2_contexts(c, nodes, batch.value, p.graph);
    std::vector<node_eval> evals;
    std::array<std::size_t, card_result::max_groups> first{};  // groups[g]'s evals, by index
    std::size_t distinct = 0;
    for (std::size_t g = 0; g < groups.size() && g < card_result::max_groups; ++g) {
        std::size_t same = g;
        for (std::size_t h = 0; h < g && same == g; ++h)
            if (groups[h].split == groups[g].split) same = h;
        if (same != g) {
            first[g] = first[same];
            continue;
        }
        first[g] = distinct++;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            evals.push_back(
                evaluate_node(c, nodes[i], batch, groups[g].split, p.graph, contexts[i]));
    }
    return detail::solve_card(c, nodes.size(), batch.value, groups, p,
                              [&](std::size_t g, std::size_t i) -> const node_eval& {
                                  return evals[first[g] * nodes.size() + i];
                              });
}

/// `streams` instances with `split` placed on a card's `chips` chips as a runtime given the
/// card's devices in turn places them: instance i on chip i mod chips, so chip j runs
/// streams / chips instances, one more while j < streams mod chips; a chip left without one
/// gets no group. groups() views them, the first chip's first.
struct chip_placement {
    std::array<instance_group, max_card_chips> all{};
    std::size_t count = 0;
    [[nodiscard]] constexpr std::span<const instance_group> groups() const noexcept {
        return {all.data(), count};
    }
};
[[nodiscard]] constexpr chip_placement spread_over_chips(const core_split& split,
                                                         stream_count streams, int chips) {
    PERFCAST_EXPECTS(chips >= 1 && chips <= max_card_chips, "spread_over_chips", "chips",
                     static_cast<double>(chips), "1 to 8 chips on the card");
    PERFCAST_EXPECTS(streams.value >= 1, "spread_over_chips", "streams",
                     static_cast<double>(streams.value), "at least 1 stream (instance)");
    chip_placement out;
    for (int j = 0; j < chips; ++j) {
        const int n = streams.value / chips + (j < streams.value % chips ? 1 : 0);
        if (n > 0) out.all[out.count++] = {split, stream_count{n}, j};
    }
    return out;
}

/// `streams` identical instances, each with `split`, spread over the card's chips
/// (card_params::chips; spread_over_chips): `evaluate_card(c, nodes, batch_size{16},
/// stream_count{2}, split)`. The batch and the stream count are distinct types, so swapping them
/// does not compile.
[[nodiscard]] constexpr card_result evaluate_card(const chip& c, std::span<const node> nodes,
                                                  batch_size batch, stream_count streams,
                                                  const core_split& split,
                                                  const card_params& p = {}) {
    PERFCAST_EXPECTS(streams.value >= 1, "evaluate_card", "streams",
                     static_cast<double>(streams.value), "at least 1 stream (instance)");
    validate(p);
    return evaluate_card(c, nodes, batch, spread_over_chips(split, streams, p.chips).groups(), p);
}

}  // namespace perfcast
