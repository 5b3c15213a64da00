// perfcast/version.hpp: the library's version.
//
// The one number is the project() version in CMakeLists.txt and meson.build; both builds hand it
// to the tests as PERFCAST_PROJECT_VERSION, and tests/test_version.cpp checks that this header
// says the same. CMakeLists.txt also stops at configure time when they differ. To release:
// change all three in one commit.
#pragma once

#include <string_view>

#define PERFCAST_VERSION_MAJOR 0
#define PERFCAST_VERSION_MINOR 1
#define PERFCAST_VERSION_PATCH 0

namespace perfcast {

/// "MAJOR.MINOR.PATCH", as printed by `perfcast --version`.
inline constexpr std::string_view version = "0.1.0";

}  // namespace perfcast
