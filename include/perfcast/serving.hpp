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
// One header a part, each including only what it needs; this one includes them all:
//   random.hpp                 the one PRNG (xoshiro256** seeded by splitmix64)
//   serving/arrivals.hpp       arrivals: Poisson, replayed traces
//   serving/result.hpp         sim_options and serving_result
//   serving/simulation.hpp     the discrete-event simulation (simulate, sweep_qps)
//   serving/analytic.hpp       the M/G/c approximation (analyze)
//   serving/saturation.hpp     saturation throughput and load states (saturation, classify)
//   serving/capacity.hpp       capacity search and card counts (find_capacity, cards_for)
//   serving/card_adapter.hpp   service times from the card model (make_card_server)
#pragma once

#include "random.hpp"
#include "serving/analytic.hpp"
#include "serving/arrivals.hpp"
#include "serving/capacity.hpp"
#include "serving/card_adapter.hpp"
#include "serving/result.hpp"
#include "serving/saturation.hpp"
#include "serving/simulation.hpp"
