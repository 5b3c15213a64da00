// perfcast/profile/file_text.hpp: a whole file's bytes as one string_view, mapped rather than
// copied where the platform can (runtime; POSIX mmap, else csv.hpp's read_file_text).
//
// Why: the JSON readers (timeline.hpp) parse a whole document as one text. Copying a 100 MB trace
// into a fresh std::string touches 100 MB of new memory before the first byte is parsed; on the
// 2-core development machine (2026-12-02, a busy one) that copy took 2.7 s while mapping the same
// file and touching every page took 0.3 s. bench/bench_timeline.cpp times the reader end to end.
//
// Caveat of a mapping: a file that another process truncates while it is mapped loses pages, and
// reading them faults (SIGBUS). Profiler outputs are written once and then read; a caller that
// reads a file still being written takes a copy instead: read_file_text() and the readers'
// text overloads (parse_timeline(text, source)). Files that cannot be mapped (pipes, empty files,
// special files) are read into a copy, with the same errors as read_file_text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "csv.hpp"

#if __has_include(<sys/mman.h>) && __has_include(<fcntl.h>) && __has_include(<unistd.h>)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#define PERFCAST_HAS_MMAP 1
#endif

namespace perfcast::profile {

/// The text of one file, owned: a read-only mapping, or a copy where mapping is not possible.
class file_text {
public:
    /// Maps (or reads) `path`; errors as open_input: parse_error naming `where` and the path.
    [[nodiscard]] static file_text read(const std::string& path, std::string_view where) {
        // Opened once: map() takes regular files only, and read_file_text refuses the rest as
        // open_input does (a directory, a device, a missing file) or reads a FIFO from its start.
        file_text t;
#ifdef PERFCAST_HAS_MMAP
        if (t.map(path)) return t;
#endif
        t.copy_ = read_file_text(path, where);
        return t;
    }

    file_text(file_text&& o) noexcept
        : copy_(std::move(o.copy_)),
          mapped_(std::exchange(o.mapped_, nullptr)),
          size_(std::exchange(o.size_, 0)) {
        o.copy_.clear();  // moved-from: empty, whichever way it held its bytes
    }
    file_text& operator=(file_text&& o) noexcept {
        if (this != &o) {
            release();
            copy_ = std::move(o.copy_);
            mapped_ = std::exchange(o.mapped_, nullptr);
            size_ = std::exchange(o.size_, 0);
            o.copy_.clear();
        }
        return *this;
    }
    file_text(const file_text&) = delete;
    file_text& operator=(const file_text&) = delete;
    ~file_text() { release(); }

    /// The bytes, valid while this object lives.
    [[nodiscard]] std::string_view view() const noexcept {
        return mapped_ != nullptr ? std::string_view(static_cast<const char*>(mapped_), size_)
                                  : std::string_view(copy_);
    }
    /// Whether the bytes are a mapping (not a copy).
    [[nodiscard]] bool mapped() const noexcept { return mapped_ != nullptr; }

private:
    file_text() = default;

#ifdef PERFCAST_HAS_MMAP
    /// A private read-only mapping of a non-empty regular file; false where that is not possible.
    bool map(const std::string& path) {
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) return false;
        const std::uintmax_t size = std::filesystem::file_size(path, ec);
        if (ec || size == 0 || size > static_cast<std::uintmax_t>(SIZE_MAX / 2)) return false;
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return false;
        void* p = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
        ::close(fd);  // the mapping keeps the file
        if (p == MAP_FAILED) return false;
        mapped_ = p;
        size_ = static_cast<std::size_t>(size);
        return true;
    }
#endif

    void release() noexcept {
#ifdef PERFCAST_HAS_MMAP
        if (mapped_ != nullptr) ::munmap(mapped_, size_);
#endif
        mapped_ = nullptr;
        size_ = 0;
    }

    std::string copy_;
    void* mapped_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace perfcast::profile
