// tests/alexnet_profile.hpp: the real torch_npu profile of AlexNet training on a 910B
// (tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt, SOURCES.md), read once, for
// the test files that check rows of it (test_conv_ops.cpp, test_layout_runs.cpp).
#pragma once

#include <string>

#include <perfcast/profile/kernel_details.hpp>

#ifndef PERFCAST_SOURCE_DIR
#error "define PERFCAST_SOURCE_DIR as the repository root (a string literal)"
#endif

namespace perfcast_test {

inline const std::string alexnet = PERFCAST_SOURCE_DIR
    "/tests/data/profiles/real/torchnpu_2025_level1_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/"
    "kernel_details.csv";

/// Its rows, read on first use.
inline const perfcast::profile::kernel_table& alexnet_rows() {
    static const perfcast::profile::kernel_table t =
        perfcast::profile::read_kernel_details_file(alexnet);
    return t;
}

}  // namespace perfcast_test
