// bench/bench_support.hpp: what more than one benchmark file needs.
#pragma once

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace perfcast_bench {

/// `text` written to `name` in the temporary folder; the file's path, or nothing when there is no
/// text or it could not be written. For benchmarks that read a large input from a file.
[[nodiscard]] inline std::optional<std::string> written_to_temp(
    const std::optional<std::string>& text, std::string_view name) {
    if (!text) return std::nullopt;
    const std::string path = (std::filesystem::temp_directory_path() / name).string();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << *text;
    if (!out) return std::nullopt;
    return path;
}

}  // namespace perfcast_bench
