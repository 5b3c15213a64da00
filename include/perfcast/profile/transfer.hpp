// perfcast/profile/transfer.hpp: a calibration of one chip carried to another of its family.
//
// What a calibration fits is of three kinds (profile/calibrate.hpp, docs/calibration.md):
//  - per op type, the work factor (the kernel's operations per element relative to the model's
//    count, at the engine's rate) and the factor of heavy types without one: properties of the
//    kernels' code, the same on every chip that runs the same kernels. With them goes the vector
//    efficiency they were fitted against: the two trade off (a low efficiency and small factors
//    fit the rows as the default one and large factors do: calibrate_options.hpp), so a factor
//    means the kernel's work only together with the efficiency beside it. That efficiency prices
//    the vector ops the factors scale (calibration::factor_vector_efficiency, params_for), and
//    no other: a type the calibration has no factor for, and attention's vector part, run at the
//    target's default, as uncalibrated;
//  - per op type, a fixed time: scalar set-up of the kernel, also its code's, fitted in
//    microseconds of the fitted chip's clock; carried as cycles, so scaled by the ratio of the
//    vector clocks;
//  - everything else (engine heads, the cube, HBM and L2 efficiencies, the HBM mix cost, the
//    first-run cost, runtime settings):
//    properties of the chip, its memory and its launch path. Those go back to the defaults, to be
//    re-derived for the target (its presets, or a calibration on its own rows).
// Measured (docs/validation.md, "Across chips"): a calibration on the shipped 910B1 profile
// scored on the Qwen3 profile of a 910B3: 34.7 % MAPE uncalibrated, 39.5 % with the whole
// calibration, 36.8 % transferred (figures of that change; the page has today's); the A100
// calibration on the H100: 27.2 %, 25.6 % and 24.2 % (median 21.5, 21.8 and 20.7 %), on the A40
// 15.7-21.2 % transferred against 17.8-23.0 % uncalibrated over five models (16.6-21.9 against
// 15.2-20.6 % since the embedding ran on PyTorch's index_select, 14.4-17.9 against 11.8-15.6 %
// since the Ampere heads were refitted; docs/validation.md,
// "Unseen models and an unseen GPU"); on the H200's PyTorch kernels 21.0 % transferred against
// 17.4 % uncalibrated (51.4 % while the fitted efficiency priced every type: "Measured on an
// H200"). A work factor of a walked type scales its walk too
// (op::walk_work): on another chip the walk's rate is the target's.
#pragma once

#include "../chip.hpp"
#include "ops.hpp"

namespace perfcast::profile {

/// `from`, fitted on chip `fitted_on`, as a calibration for chip `target`: the per-type work
/// factors, the unseen-heavy factor and the vector efficiency they were fitted against kept (as
/// factor_vector_efficiency: for the ops they scale), the fixed times and times per core scaled
/// by the vector clocks' ratio, every chip-bound parameter at its default.
[[nodiscard]] inline calibration transferred(const calibration& from, const chip& fitted_on,
                                             const chip& target) {
    PERFCAST_EXPECTS(target.vector.clock > frequency{}, "transferred", "target vector clock",
                     target.vector.clock.in(units::Hz), "a chip with a vector clock");
    calibration to;
    to.chip = std::string(target.name.view());
    to.work_factor = from.work_factor;
    to.unseen_heavy_factor = from.unseen_heavy_factor;
    to.factor_vector_efficiency = from.factor_vector_efficiency > 0 ? from.factor_vector_efficiency
                                                                    : from.params.vector_efficiency;
    const double cycles_ratio = fitted_on.vector.clock / target.vector.clock;
    for (const auto& [type, t] : from.fixed_time) to.fixed_time.emplace(type, t * cycles_ratio);
    for (const auto& [type, t] : from.per_core_time)
        to.per_core_time.emplace(type, t * cycles_ratio);
    return to;
}

}  // namespace perfcast::profile
