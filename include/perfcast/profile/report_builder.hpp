// perfcast/profile/report_builder.hpp: report_builder, which takes kernel rows one at a time
// and whose finish() returns the profile_report (report.hpp says what is in it), and
// build_report, which feeds it a stream, a discovered profile source or a file.
//
// Past 500 lines on purpose: report_builder is one accumulator whose add() (each finding's
// check per row) and finish() (utilization, shares, the findings' evidence) share its state.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../chip.hpp"
#include "../dtype.hpp"
#include "../enum_table.hpp"
#include "../units.hpp"
#include "chip_evidence.hpp"
#include "discover.hpp"
#include "kernel_details.hpp"
#include "ops.hpp"
#include "report_measures.hpp"
#include "report_result.hpp"

namespace perfcast::profile {

/// Accumulates rows; `finish` computes the report.
class report_builder {
public:
    explicit report_builder(const chip& c, report_options opt = {}) : chip_(c), opt_(opt) {
        groups_[0].u.label = "cube, AI_CORE tasks (guide §2)";
        groups_[1].u.label = "cube, AI_CORE + MIX tasks";
        groups_[2].u.label = "vector, AI_VECTOR_CORE + MIX tasks";
        groups_[2].u.which = engine::vector;
        for (std::size_t i = 0; i < finding_kind_count; ++i) {
            findings_[i].kind = static_cast<finding_kind>(i);
        }
    }

    void add(const kernel_row& r) {
        ++rows_;  // also the row's ordinal, for flag()
        evidence_.add(r);
        if (r.step) ++steps_[*r.step];
        const duration d = r.task_duration.value_or(duration{});
        total_ += d;

        // (a) utilization groups
        if (r.task == task_type::ai_core) add_to_group(groups_[0], r, r.aic_total_cycles);
        if (r.task == task_type::ai_core || r.task == task_type::mix_aic ||
            r.task == task_type::mix_aiv)
            add_to_group(groups_[1], r, r.aic_total_cycles);
        if (r.task == task_type::ai_vector_core || r.task == task_type::mix_aic ||
            r.task == task_type::mix_aiv)
            add_to_group(groups_[2], r, r.aiv_total_cycles);

        // (c) time by type
        type_key_.assign(r.op_type).push_back('\x1f');
        type_key_.append(r.task_text);
        auto it = by_type_.find(type_key_);
        if (it == by_type_.end()) {
            it = by_type_.emplace(type_key_, type_agg{r.op_type, r.task_text, 0, {}}).first;
        }
        ++it->second.count;
        it->second.total += d;

        // (e) gaps and waits
        if (r.start && r.task_duration) {
            intervals_.push_back({r.start->ns, r.end()->ns});
        }
        if (r.wait) {
            wait_ += *r.wait;
            ++wait_rows_;
        }

        const bool conflict = r.has_note(note_kind::shape_conflict);
        const std::optional<data_size> bytes = conflict ? std::nullopt : bytes_moved_once(r);
        std::optional<bandwidth> achieved;
        if (bytes && d >= min_rate_time) achieved = *bytes / d;

        // (d) pipes
        const double thr = opt_.pipe_ratio_threshold;
        const auto over = [thr](const std::optional<double>& v) { return v && *v > thr; };
        const bool memory_bound =
            over(r.aic_mte2_ratio) || over(r.aiv_mte2_ratio) || over(r.aiv_mte3_ratio);
        if (memory_bound) {
            flag(finding_kind::memory_bound_op, r, d, [&] { return mte_detail(r); });
        }
        if (over(r.aic_mac_ratio) || over(r.aiv_vec_ratio)) {
            flag(finding_kind::compute_bound_op, r, d, [&] { return bound_pipes(r, thr); });
        }
        if (over(r.aic_scalar_ratio) || over(r.aiv_scalar_ratio)) {
            flag(finding_kind::scalar_bound_op, r, d, [&] { return bound_pipes(r, thr); });
        }

        // (f) AI CPU
        if (r.task == task_type::ai_cpu)
            flag(finding_kind::aicpu_op, r, d, [&] { return dtype_summary(r); });

        // (g) int64 on vector cores
        if (r.task == task_type::ai_vector_core || r.task == task_type::mix_aiv ||
            r.task == task_type::mix_aic) {
            check_int64(r, d);
        }

        // (h) alignment
        if (runs_on_ai_cores(r.task) && !conflict) check_alignment(r, d);

        // (i) block dims
        if (const auto e = block_dim_engine(r.task); e && r.block_dim && *r.block_dim > 0) {
            const int cores = chip_.engine_of(*e).cores;
            const int b = *r.block_dim;
            if (cores > 0 && b > cores && b % cores != 0) {
                const int waves = (b + cores - 1) / cores;
                const double idle =
                    static_cast<double>(waves * cores - b) / static_cast<double>(waves * cores);
                flag(finding_kind::block_tail, r, d, [&] {
                    return std::string("block dim " + std::to_string(b) + " on " +
                                       std::to_string(cores) + " " + std::string(name_of(*e)) +
                                       " cores: " + std::to_string(waves) + " waves, " +
                                       detail::fixed3(idle * 100.0) + " % of core-waves idle");
                });
            } else if (cores > 0 && b < cores) {
                flag(finding_kind::under_filled, r, d, [&] {
                    return std::string("block dim " + std::to_string(b) + " of " +
                                       std::to_string(cores) + " " + std::string(name_of(*e)) +
                                       " cores");
                });
            }
        }

        // (j) bandwidth
        const bandwidth hbm = chip_.memory.hbm_bandwidth;
        if (memory_bound && achieved && hbm.base_value() > 0 &&
            *achieved / hbm < opt_.low_bandwidth_share) {
            flag(finding_kind::low_bandwidth, r, d, [&] {
                return std::string((is_write_only_type(r.op_type)
                                        ? "outputs once (write-only type): "
                                        : "inputs+outputs once: ") +
                                   detail::fixed3(achieved->in(units::GBps)) +
                                   " GB/s = " + detail::fixed3(*achieved / hbm * 100.0) + " % of " +
                                   detail::fixed3(hbm.in(units::GBps)) + " GB/s");
            });
        }

        // reader notes: a row with two unknown dtypes is one row of the finding, both named
        const auto notes_of = [&r](note_kind k) {
            std::string s;
            for (const row_note& n : r.notes)
                if (n.kind == k) s += (s.empty() ? "" : "; ") + n.detail;
            return s;
        };
        if (r.has_note(note_kind::shape_conflict))
            flag(finding_kind::shape_conflict, r, d,
                 [&] { return notes_of(note_kind::shape_conflict); });
        if (r.has_note(note_kind::unknown_dtype))
            flag(finding_kind::unknown_dtype, r, d,
                 [&] { return notes_of(note_kind::unknown_dtype); });

        // top ops
        if (opt_.top_ops > 0) keep_top(r, d, achieved);
    }

    [[nodiscard]] profile_report finish(std::string source = {}, std::string format = {}) {
        profile_report rep;
        rep.source = std::move(source);
        rep.format = std::move(format);
        rep.chip_name = std::string(chip_.name.view());
        rep.chip_note = chip_mismatch(chip_, evidence_.result());
        rep.rows = rows_;
        rep.total_time = total_;
        rep.steps = steps_;

        for (auto& g : groups_) {
            engine_utilization u = g.u;
            const engine_spec& e = chip_.engine_of(g.u.which);
            u.cores = e.cores;
            u.clock = e.clock;
            if (g.u.tasks > 0) {
                u.seed_span = timestamp{g.last_start} - timestamp{g.first_start};
                u.full_span = timestamp{g.last_end} - timestamp{g.first_start};
                if (u.seed_span.base_value() > 0) {
                    u.seed_utilization =
                        u.cycles / available_cycles(e.clock, core_count{e.cores}, u.seed_span);
                }
                if (u.full_span.base_value() > 0) {
                    u.full_utilization =
                        u.cycles / available_cycles(e.clock, core_count{e.cores}, u.full_span);
                }
            }
            u.note = utilization_note(u);
            rep.utilization.push_back(std::move(u));
        }

        for (auto& [key, t] : by_type_) {
            op_type_time x;
            x.op_type = t.op_type;
            x.task = t.task;
            x.count = t.count;
            x.total = t.total;
            x.share = total_.base_value() > 0 ? t.total / total_ : 0.0;
            rep.by_type.push_back(std::move(x));
        }
        std::stable_sort(rep.by_type.begin(), rep.by_type.end(),
                         [](const auto& a, const auto& b) { return a.total > b.total; });

        rep.top_ops = top_;
        std::sort(rep.top_ops.begin(), rep.top_ops.end(), [](const auto& a, const auto& b) {
            return a.time > b.time || (a.time == b.time && a.line < b.line);
        });

        rep.host = host_summary();

        // Chip-level findings. The seed's filter (AI_CORE tasks) over the span that holds them
        // all: the seed's own span leaves out the last task and can pass 100 % on its own.
        const engine_utilization& seed = rep.utilization[0];
        if (seed.full_utilization && *seed.full_utilization > opt_.compute_bound_utilization) {
            finding& f = findings_[static_cast<std::size_t>(finding_kind::compute_bound)];
            f.rows = seed.tasks;
            f.time = seed.task_time;
            f.evidence = "cube utilization " + detail::fixed3(*seed.full_utilization * 100.0) +
                         " % > " + detail::fixed3(opt_.compute_bound_utilization * 100.0) +
                         " % over " + std::to_string(seed.tasks) +
                         " AI_CORE tasks, first start to last end";
            if (seed.seed_utilization) {
                f.evidence += " (the seed's span, last start - first start: " +
                              detail::fixed3(*seed.seed_utilization * 100.0) + " %)";
            }
            if (!seed.note.empty()) f.evidence += "; " + seed.note;
        }
        if (rep.host.idle_share && *rep.host.idle_share > opt_.host_idle_share) {
            finding& f = findings_[static_cast<std::size_t>(finding_kind::host_bound)];
            f.rows = rep.host.gaps;
            f.time = rep.host.idle;
            f.evidence = "device idle " + detail::fixed3(*rep.host.idle_share * 100.0) + " % of " +
                         detail::fixed3(rep.host.window.in(units::us)) + " us; " +
                         std::to_string(rep.host.gaps_longer_than_next) + " of " +
                         std::to_string(rep.host.gaps) +
                         " gaps longer than the task after them; total wait " +
                         detail::fixed3(rep.host.total_wait.in(units::us)) + " us";
        }
        for (auto& f : findings_) {
            if (f.rows == 0) continue;
            if (f.evidence.empty()) {
                f.evidence = std::to_string(f.rows) + " rows, " +
                             detail::fixed3(f.time.in(units::us)) + " us (" +
                             detail::fixed3(total_.base_value() > 0 ? f.time / total_ * 100.0 : 0) +
                             " % of device time)";
            }
            std::sort(f.examples.begin(), f.examples.end(), [](const auto& a, const auto& b) {
                return a.time > b.time || (a.time == b.time && a.line < b.line);
            });
            rep.findings.push_back(f);
        }
        return rep;
    }

private:
    struct group {
        engine_utilization u;
        std::int64_t first_start = 0;
        std::int64_t last_start = 0;
        std::int64_t last_end = 0;
    };
    struct type_agg {
        std::string op_type;
        std::string task;
        std::size_t count = 0;
        duration total{};
    };
    struct interval {
        std::int64_t begin;
        std::int64_t end;
    };

    /// Why a utilization above 100 % is not one (empty when neither value passes 100 %).
    static std::string utilization_note(const engine_utilization& u) {
        if (u.full_utilization && *u.full_utilization > 1.0) return std::string(chip_mismatch_note);
        if (u.seed_utilization && *u.seed_utilization > 1.0) {
            return "seed span above 100 %: it ends at the last start, " +
                   detail::fixed3((u.full_span - u.seed_span).in(units::us)) +
                   " us before the last end, so the last task's cycles have no time; first "
                   "start to last end: " +
                   (u.full_utilization ? detail::fixed3(*u.full_utilization * 100.0) : "-") + " %";
        }
        return {};
    }

    void add_to_group(group& g, const kernel_row& r, const std::optional<cycle_count>& cyc) {
        if (!r.start || !r.task_duration) return;
        if (g.u.tasks == 0) {
            g.first_start = g.last_start = r.start->ns;
            g.last_end = r.end()->ns;
        }
        ++g.u.tasks;
        g.u.task_time += *r.task_duration;
        if (cyc) g.u.cycles += *cyc;
        g.first_start = std::min(g.first_start, r.start->ns);
        g.last_start = std::max(g.last_start, r.start->ns);
        g.last_end = std::max(g.last_end, r.end()->ns);
    }

    std::string mte_detail(const kernel_row& r) const {
        std::string s;
        const double thr = opt_.pipe_ratio_threshold;
        const auto add = [&s, thr](const std::optional<double>& v, std::string_view n) {
            if (!v || *v <= thr) return;
            if (!s.empty()) s += ", ";
            s += n;
            s += ' ';
            s += detail::fixed3(*v);
        };
        add(r.aic_mte2_ratio, "aic_mte2");
        add(r.aiv_mte2_ratio, "aiv_mte2");
        add(r.aiv_mte3_ratio, "aiv_mte3");
        return s;
    }

    static std::string dtype_summary(const kernel_row& r) {
        const auto list = [](const std::vector<tensor_dtype>& t) {
            std::string s;
            for (const auto& x : t) s += (s.empty() ? "" : ";") + x.text;
            return s.empty() ? std::string("-") : s;
        };
        return "inputs " + list(r.input_types) + " -> outputs " + list(r.output_types);
    }

    /// Counts the row under `k` and keeps it as an example when it is among the longest;
    /// `make_detail` runs only then (most flagged rows of a large profile are not kept). A row
    /// counts once per finding: a second call for the same row and kind does nothing.
    template <class F>
    void flag(finding_kind k, const kernel_row& r, duration d, F&& make_detail) {
        const auto i = static_cast<std::size_t>(k);
        if (flagged_at_[i] == rows_) return;
        flagged_at_[i] = rows_;
        finding& f = findings_[i];
        ++f.rows;
        f.time += d;
        if (opt_.max_examples == 0) return;
        if (f.examples.size() < opt_.max_examples) {
            f.examples.push_back({r.line, r.name, r.op_type, d, make_detail()});
            return;
        }
        // Replace the shortest kept example when this one is longer.
        auto shortest =
            std::min_element(f.examples.begin(), f.examples.end(),
                             [](const auto& a, const auto& b) { return a.time < b.time; });
        if (shortest->time < d) *shortest = {r.line, r.name, r.op_type, d, make_detail()};
    }

    void check_int64(const kernel_row& r, duration d) {
        // Inputs and outputs are judged apart: Equal on int64 inputs writes a large bool
        // output (guide §7: [1,4000] vs [400,1]), and the slow path is in reading the inputs.
        struct share {
            double all = 0;
            double wide = 0;
        };
        const auto scan = [](const std::vector<tensor_shape>& s,
                             const std::vector<tensor_dtype>& t) {
            share x;
            if (s.size() != t.size()) return x;
            for (std::size_t i = 0; i < s.size(); ++i) {
                const auto n = s[i].elements();
                if (!n || !t[i].type) continue;
                const double b = static_cast<double>(*n) * size_of(*t[i].type).in(units::B);
                x.all += b;
                if (!vector_native(*t[i].type) && is_integer(*t[i].type)) x.wide += b;
            }
            return x;
        };
        const share in = scan(r.input_shapes, r.input_types);
        const share out = scan(r.output_shapes, r.output_types);
        // A Cast from int64 to a vector-native type is the finding's own fix, not a case of it.
        if (r.op_type == "Cast" && out.wide == 0 && out.all > 0) return;
        const auto hit = [this](const share& x) {
            return x.wide >= opt_.int64_min_bytes && x.wide / x.all >= opt_.int64_byte_share;
        };
        if (!hit(in) && !hit(out)) return;
        const share& w = hit(in) ? in : out;
        flag(finding_kind::int64_on_vector, r, d, [&] {
            return std::string(detail::fixed3(w.wide / w.all * 100.0) + " % of the " +
                               (&w == &in ? "input" : "output") + " bytes (" +
                               detail::fixed3(w.all) + " B) in int64/uint64");
        });
    }

    void check_alignment(const kernel_row& r, duration d) {
        const double align = chip_.alignment.in(units::B);
        if (align <= 0) return;
        // A row whose inputs all have its output's shape moves whole contiguous tensors: no
        // short runs, whatever the last dimension (kernel_row.hpp walks_rows; the cost model
        // prices it as one run).
        if (!walks_rows(r)) return;
        std::string first;
        std::size_t bad = 0;
        const auto scan = [&](const std::vector<tensor_shape>& s,
                              const std::vector<tensor_dtype>& t,
                              const std::vector<std::string>& fmt, std::string_view side) {
            if (s.size() != t.size()) return;
            for (std::size_t i = 0; i < s.size(); ++i) {
                if (s[i].scalar() || !t[i].type) continue;
                if (i < fmt.size() && !detail::aligned_format(fmt[i])) continue;
                const auto n = s[i].elements();
                const double elem = size_of(*t[i].type).in(units::B);
                // A tensor of at most one alignment unit is one short move whatever its shape
                // (the [1] scalars broadcast into Mul): nothing to fix there.
                if (!n || static_cast<double>(*n) * elem <= align) continue;
                const double run = static_cast<double>(innermost_extent(s[i])) * elem;
                if (std::fmod(run, align) != 0.0) {
                    if (bad == 0) {
                        first = std::string(side) + " " + std::to_string(i) + " " +
                                to_string(s[i]) + " " + t[i].text + ": innermost run " +
                                detail::fixed3(run) + " B";
                    }
                    ++bad;
                }
            }
        };
        scan(r.input_shapes, r.input_types, r.input_formats, "input");
        scan(r.output_shapes, r.output_types, r.output_formats, "output");
        if (bad > 0) {
            if (bad > 1) first += " (+" + std::to_string(bad - 1) + " more tensors)";
            flag(finding_kind::misaligned_move, r, d, [&] { return std::move(first); });
        }
    }

    void keep_top(const kernel_row& r, duration d, const std::optional<bandwidth>& achieved) {
        if (top_.size() == opt_.top_ops) {
            auto shortest =
                std::min_element(top_.begin(), top_.end(),
                                 [](const auto& a, const auto& b) { return a.time < b.time; });
            if (!(shortest->time < d)) return;
            top_.erase(shortest);
        }
        op_entry e;
        e.line = r.line;
        e.name = r.name;
        e.op_type = r.op_type;
        e.task = r.task_text;
        e.time = d;
        e.block_dim = r.block_dim;
        e.cube_utilization_pct = recomputed_cube_utilization_pct(r, chip_);
        e.profiled_cube_utilization_pct = r.cube_utilization_pct;
        e.bound = bound_pipes(r, opt_.pipe_ratio_threshold);
        e.achieved = achieved;
        const bandwidth hbm = chip_.memory.hbm_bandwidth;
        if (achieved && hbm.base_value() > 0) {
            // Faster than HBM can deliver: part of the data came from L2 (or the bytes were
            // cached), so a share of HBM above 100 % would mean nothing.
            if (*achieved > hbm) {
                e.above_hbm_peak = true;
            } else {
                e.hbm_share = *achieved / hbm;
            }
        }
        const auto note = [&e](std::string_view n) {
            if (!e.notes.empty()) e.notes += "; ";
            e.notes += n;
        };
        for (const row_note& n : r.notes) note(name_of(n.kind));
        if (bytes_too_large(r)) note(too_large_bytes_note);
        e.above_compute_peak = above_compute_peak(r, d);
        if (e.above_compute_peak) note(above_compute_note);
        if (e.above_hbm_peak && !e.above_compute_peak) note(above_hbm_note);
        if (e.cube_utilization_pct && *e.cube_utilization_pct > 100.0) note(chip_mismatch_note);
        top_.push_back(std::move(e));
    }

    /// Whether GEMM row `r` did its multiply-adds faster than the chip's cube peak at its dtype
    /// allows (by more than 2 %): not an L2 or cache effect, but another chip or clock, or shapes
    /// that are not the kernel's. A row the mapping refuses (or finds too large) is not judged.
    [[nodiscard]] bool above_compute_peak(const kernel_row& r, duration d) const {
        if (!is_gemm_type(r.op_type) || !(d > duration{})) return false;
        try {
            const auto o = op_of(r);
            if (!o || o->eng != engine::cube || !(o->useful_ops > 0)) return false;
            // fp32's cube rates are assumptions (chips/), and an fp32 GEMM may run as HF32 or
            // TF32 where allowed, at several times the fp32 rate: not judged.
            if (o->type == dtype::fp32 || o->type == dtype::hf32) return false;
            const double peak = chip_.peak(engine::cube, o->type).in(units::flops);
            return peak > 0 && o->flops().in(units::flop) / d.in(units::s) > 1.02 * peak;
        } catch (const ::perfcast::error&) {
            return false;
        }
    }

    host_bound_summary host_summary() {
        host_bound_summary h;
        h.total_wait = wait_;
        h.wait_rows = wait_rows_;
        h.timed_tasks = intervals_.size();
        if (intervals_.empty()) return h;
        std::sort(intervals_.begin(), intervals_.end(), [](const interval& a, const interval& b) {
            return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
        });
        // Differences through timestamp's `-`: exact in int64 where they fit, in doubles where a
        // damaged file's times span more than int64 (fuzz_msprof_db found 2^63 - 1 minus -9e18
        // here). Each busy stretch is an integer number of ns below 2^53 in any real profile, so
        // their sum in doubles is exact too.
        const std::int64_t first = intervals_.front().begin;
        std::int64_t cur_end = intervals_.front().end;
        std::int64_t last_end = cur_end;
        duration busy{};
        std::int64_t cur_begin = first;
        for (std::size_t i = 1; i < intervals_.size(); ++i) {
            const interval& x = intervals_[i];
            if (x.begin > cur_end) {
                busy += timestamp{cur_end} - timestamp{cur_begin};
                ++h.gaps;
                if (timestamp{x.begin} - timestamp{cur_end} > timestamp{x.end} - timestamp{x.begin})
                    ++h.gaps_longer_than_next;
                cur_begin = x.begin;
                cur_end = x.end;
            } else {
                cur_end = std::max(cur_end, x.end);
            }
            last_end = std::max(last_end, x.end);
        }
        busy += timestamp{cur_end} - timestamp{cur_begin};
        h.window = timestamp{last_end} - timestamp{first};
        h.busy = busy;
        h.idle = h.window - h.busy;
        if (h.window.base_value() > 0) h.idle_share = h.idle / h.window;
        return h;
    }

    chip chip_;
    rows_evidence evidence_;  // the chip the rows say ran them (chip_mismatch)
    report_options opt_;
    std::size_t rows_ = 0;
    std::map<int, std::size_t> steps_;
    duration total_{};
    std::array<group, 3> groups_{};
    std::map<std::string, type_agg, std::less<>> by_type_;  // key: type '\x1f' task
    std::string type_key_;
    std::vector<interval> intervals_;
    duration wait_{};
    std::size_t wait_rows_ = 0;
    std::array<finding, finding_kind_count> findings_{};
    std::array<std::size_t, finding_kind_count> flagged_at_{};  // ordinal of the last row flagged
    std::vector<op_entry> top_;
};

/// Reads a profile stream and reports on it for chip `c`.
[[nodiscard]] inline profile_report build_report(std::istream& in, std::string source,
                                                 const chip& c, report_options opt = {},
                                                 kernel_reader_options ropt = {}) {
    kernel_details_reader reader(in, source, ropt);
    report_builder b(c, opt);
    kernel_row row;
    while (reader.next(row)) b.add(row);
    profile_report r = b.finish(std::move(source), std::string(name_of(reader.header().format)));
    r.skipped = reader.skipped();
    r.skipped_count = reader.skipped_count();
    return r;
}

/// The report over every file of `s` (the slices of one op_summary read as one table).
[[nodiscard]] inline profile_report build_report(const profile_source& s, const chip& c,
                                                 report_options opt = {},
                                                 kernel_reader_options ropt = {}) {
    report_builder b(c, opt);
    std::string format;
    std::vector<skipped_row> skipped;
    std::size_t skipped_count = 0;
    for_each_source_file(s, ropt, [&](kernel_details_reader& reader) {
        kernel_row row;
        while (reader.next(row)) b.add(row);
        if (format.empty()) format = std::string(name_of(reader.header().format));
        skipped.insert(skipped.end(), reader.skipped().begin(), reader.skipped().end());
        skipped_count += reader.skipped_count();
    });
    profile_report r = b.finish(s.name(), std::move(format));
    r.skipped = std::move(skipped);
    r.skipped_count = skipped_count;
    return r;
}

[[nodiscard]] inline profile_report build_report_file(const std::string& path, const chip& c,
                                                      report_options opt = {},
                                                      kernel_reader_options ropt = {}) {
    std::ifstream f = open_input(path, "build_report");
    return build_report(f, path, c, opt, ropt);
}

}  // namespace perfcast::profile
