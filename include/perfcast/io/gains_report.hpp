// perfcast/io/gains_report.hpp: what each change to one deployment buys
// (deployment_gains.hpp, what_each_change_buys) as a table or JSON: what `perfcast whatif
// --gains` prints.
//
//   const perfcast::deployment_gains g = perfcast::what_each_change_buys(d);
//   perfcast::io::write_gains_table(std::cout, d, g);  // or write_gains_json
#pragma once

#include <array>
#include <ostream>
#include <string>

#include "../deployment.hpp"
#include "../deployment_gains.hpp"
#include "../runtime.hpp"
#include "json.hpp"
#include "memory_report.hpp"
#include "table.hpp"

namespace perfcast::io {

/// "2 x 12/24 b64": a deployment's instances, cube / vector cores and batch; on a card of
/// several chips "4 x 12/24 b64 on 2 chips".
[[nodiscard]] inline std::string deployment_text(const deployment_case& d) {
    std::string s = std::to_string(d.instances.value) + " x " + std::to_string(d.split.cube.value) +
                    "/" + std::to_string(d.split.vector.value) + " b" +
                    std::to_string(d.batch.value);
    if (d.chips > 1) s += " on " + std::to_string(d.chips) + " chips";
    return s;
}

namespace detail {
/// A share as a signed percentage with one decimal: "+12.5", "-3.0", "0.0".
[[nodiscard]] inline std::string signed_pct(double share) {
    const std::string s = format_fixed(100 * share, 1);
    return share > 0 && s != "0.0" ? "+" + s : s;
}
}  // namespace detail

/// One task's steps under load (card_result's first group: --gains has one), where the
/// deployment's time goes: "prepare 0.000, buffers 0.040, ... between 0.000 ms; waiting at
/// the device lock 0.012 ms" (the wait only where there is one).
[[nodiscard]] inline std::string steps_text(const task_times& st) {
    std::string s;
    for (const auto& e : task_step_names) {
        if (!s.empty()) s += ", ";
        s += std::string(e.name) + " " + format_fixed(st.of(e.value).in(units::ms), 3);
    }
    s += " ms";
    if (st.lock_wait > duration{}) {
        s += "; waiting at the device lock " + format_fixed(st.lock_wait.in(units::ms), 3) + " ms";
    }
    return s;
}

/// Members "steps_ms" (one task's steps under load by name, in ms: card_result's first group)
/// and "lock_wait_ms" (the part of buffers, and of the copies with copy_lock=yes, spent waiting
/// for other instances at the device lock); both null without a runtime path (the kernels
/// alone). prepare .. post are the task; between is outside it.
inline void write_steps_json(json_writer& j, const card_result& card) {
    const bool steps = card.runtime_path && card.group_count > 0;
    j.key("steps_ms");
    if (steps) {
        const task_times& st = card.groups[0].steps;
        j.begin_object();
        for (const auto& e : task_step_names) j.member(e.name, st.of(e.value).in(units::ms));
        j.end_object();
    } else {
        j.null();
    }
    j.member_or_null("lock_wait_ms", steps,
                     [&] { return card.groups[0].steps.lock_wait.in(units::ms); });
}

/// The deployment, its runtime path and one row per change, best throughput first.
inline void write_gains_table(std::ostream& out, const deployment_case& d,
                              const deployment_gains& g) {
    out << "deployment: " << d.m->name << " on " << d.c.name.view() << ", " << deployment_text(d)
        << ": " << throughput_text(g.base.samples_per_s) << " samples/s, window "
        << format_fixed(g.base.latency.in(units::ms), 3) << " ms, cycle "
        << format_fixed(g.base.cycle.in(units::ms), 3) << " ms\n";
    out << "runtime path: "
        << (g.path ? runtime_summary(*g.path) : std::string("none (kernels only)")) << "\n";
    if (g.base.card.runtime_path && g.base.card.group_count > 0) {
        out << "steps of one task: " << steps_text(g.base.card.groups[0].steps) << "\n";
    }
    const std::array<memory_need, 1> need{g.need};
    // On a card of several chips: the fullest chip's instances, of its memory.
    const bool chips = d.chips > 1;
    out << memory_need_line(need, g.rule) << "\n"
        << (g.fits ? "the deployment holds at least " + size_text(g.memory) +
                         (chips ? " on its fullest chip, of a chip's " : " of the card's ") +
                         size_text(d.c.memory.hbm_size)
                   : "the deployment does not fit: " +
                         std::string(chips ? "its fullest chip needs" : "it needs") + " at least " +
                         size_over(g.memory, d.c.memory.hbm_size) + ", " +
                         (chips ? "a chip" : "the card") + " has " + size_text(d.c.memory.hbm_size))
        << "\n\n";
    text_table t(
        {"#", "change", "samples/s", "gain %", "window ms", "change %", "cycle ms", "bound"});
    int rank = 0;
    for (const deployment_change& c : g.changes) {
        const std::string what =
            c.fits ? c.what
                   : c.what + " (does not fit: " + size_over(c.memory, d.c.memory.hbm_size) + ")";
        t.add_row({std::to_string(++rank), what, throughput_text(c.prediction.samples_per_s),
                   detail::signed_pct(c.throughput_gain),
                   format_fixed(c.prediction.latency.in(units::ms), 3),
                   detail::signed_pct(c.latency_change),
                   format_fixed(c.prediction.cycle.in(units::ms), 3),
                   std::string(name_of(c.prediction.card.bound))});
    }
    t.write(out);
    out << "\nEach change alone, from the deployment as it is; gain: samples/s (closed loop) "
           "against\nthe deployment's; change: the timed window's latency. Instances keep their "
           "core limits\n(more instances than a chip has cores for share them); a change "
           "whose instances do not fit\nthe card's memory ranks last.\n";
}

/// The same as one JSON object: the deployment's figures and a `changes` array.
inline void write_gains_json(std::ostream& out, const deployment_case& d,
                             const deployment_gains& g) {
    json_writer j(out);
    j.begin_object()
        .member("model", d.m->name)
        .member("chip", d.c.name.view())
        .member("deployment", deployment_text(d))
        .member("runtime", g.path ? runtime_summary(*g.path) : std::string("none"))
        .member("samples_per_s", g.base.samples_per_s)
        .member("window_ms", g.base.latency.in(units::ms))
        .member("cycle_ms", g.base.cycle.in(units::ms))
        .member("memory_gib", g.memory.in(units::GiB))
        .member("capacity_gib", d.c.memory.hbm_size.in(units::GiB))  // a chip's
        .member("chips_per_card", d.chips)
        .member("fits", g.fits);
    write_steps_json(j, g.base.card);
    j.key("changes").begin_array();
    for (const deployment_change& c : g.changes) {
        j.begin_object()
            .member("change", c.what)
            .member("samples_per_s", c.prediction.samples_per_s)
            .member("throughput_gain", c.throughput_gain)
            .member("window_ms", c.prediction.latency.in(units::ms))
            .member("latency_change", c.latency_change)
            .member("cycle_ms", c.prediction.cycle.in(units::ms))
            .member("bound", name_of(c.prediction.card.bound))
            .member("memory_gib", c.memory.in(units::GiB))
            .member("fits", c.fits)
            .end_object();
    }
    j.end_array().end_object();
    out << '\n';
}

}  // namespace perfcast::io
