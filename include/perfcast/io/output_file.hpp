// perfcast/io/output_file.hpp: files written whole, checked and atomically (runtime only).
//
//   const perfcast::io::output_file svg{"plot.svg", "--svg"};
//   perfcast::io::check_output(svg);              // before the long computation
//   ...
//   perfcast::io::write_output(svg, [&](std::ostream& os) { plot.write(os); });
//
// A regular file (or a new one) is written to a temporary file in the same directory, every write
// checked, flushed and closed, then renamed over the target: a reader sees the old file or the
// new one, never half of either, and a failure (disk full, file-size limit, permissions) leaves
// the old file as it was and removes the temporary one. An existing special file (a device such
// as /dev/stdout or /dev/null, a FIFO) is written in place, with the same checks. A symbolic link
// is followed to its target unless the output refuses links (`perfcast calibrate -o`: a params
// file is read back later, so a planted link must not redirect it). Every failure is one
// perfcast::error naming the path, the flag and the OS reason:
//   cannot write 'fit.params' (-o): No space left on device
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "../error.hpp"

namespace perfcast::io {

/// Whether an output path may be a symbolic link.
enum class symlinks : unsigned char { follow, refuse };

/// A file the command writes: its path, the flag that named it (for messages), the link policy.
struct output_file {
    std::string path;
    std::string_view flag;
    symlinks links = symlinks::follow;
};

namespace output_detail {

namespace fs = std::filesystem;

[[noreturn]] inline void fail(const output_file& f, std::string_view why) {
    std::string m = "cannot write '" + f.path + "'";
    if (!f.flag.empty()) m.append(" (").append(f.flag).append(")");
    m.append(": ").append(why);
    throw ::perfcast::error(m);
}

[[noreturn]] inline void fail_errno(const output_file& f, std::string_view doing, int err) {
    std::string why(doing);
    if (err != 0) why.append(why.empty() ? "" : ": ").append(std::strerror(err));
    fail(f, why.empty() ? std::string("write failed") : why);
}

/// Where to write and how: `direct` for an existing special file written in place.
struct plan {
    fs::path target;
    bool direct = false;
    bool existed = false;
};

[[nodiscard]] inline plan plan_of(const output_file& f) {
    if (f.path.empty()) fail(f, "empty path");
    std::error_code ec;
    fs::path target = f.path;
    const fs::file_status link = fs::symlink_status(target, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) fail(f, ec.message());
    if (fs::is_symlink(link)) {
        if (f.links == symlinks::refuse) {
            fail(f,
                 "is a symbolic link, which this output does not follow (name the file it "
                 "points to)");
        }
        const fs::file_status st = fs::status(target, ec);
        if (!fs::exists(st)) fail(f, "is a symbolic link to a file that does not exist");
        if (fs::is_regular_file(st)) {
            target = fs::canonical(target, ec);
            if (ec) fail(f, ec.message());
        }
    }
    const fs::file_status st = fs::status(target, ec);
    if (fs::is_directory(st)) fail(f, "is a directory");
    if (fs::exists(st) && !fs::is_regular_file(st)) return {target, true, true};
    fs::path dir = target.parent_path();
    if (dir.empty()) dir = ".";
    const fs::file_status ds = fs::status(dir, ec);
    if (!fs::exists(ds)) fail(f, "directory '" + dir.string() + "' does not exist");
    if (!fs::is_directory(ds)) fail(f, "'" + dir.string() + "' is not a directory");
    return {target, false, fs::exists(st)};
}

/// Creates a new temporary file next to `target` ("wbx": never an existing file).
[[nodiscard]] inline std::FILE* open_temp(const output_file& f, const fs::path& target,
                                          std::string& tmp) {
    static std::atomic<unsigned> counter{0};  // outputs may be written from several threads
    // Appended rather than `"." + string`: GCC 12 warns falsely on that operator at -O3 where
    // it is inlined (-Wrestrict, https://gcc.gnu.org/bugzilla/show_bug.cgi?id=105329).
    std::string hidden = ".";
    hidden += target.filename().string();
    const std::string stem = (target.parent_path() / hidden).string();
    int err = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
        // The address of a local differs between processes (ASLR) and the counter within one.
        const auto salt = reinterpret_cast<std::uintptr_t>(&err) ^ (++counter * 2654435761U);
        tmp = stem + ".tmp" + std::to_string(salt % 1000000007U);
        errno = 0;
        if (std::FILE* fp = std::fopen(tmp.c_str(), "wbx")) return fp;
        err = errno;
        if (err != EEXIST) break;
    }
    fail_errno(f, "cannot create a temporary file in its directory", err);
}

/// Writes all of `content` to `fp` and closes it; the errno of the first failure, else 0.
[[nodiscard]] inline int write_close(std::FILE* fp, std::string_view content) {
    int err = 0;
    errno = 0;
    if (!content.empty() && std::fwrite(content.data(), 1, content.size(), fp) != content.size()) {
        err = errno != 0 ? errno : EIO;
    }
    errno = 0;
    if (err == 0 && std::fflush(fp) != 0) err = errno != 0 ? errno : EIO;
    errno = 0;
    if (std::fclose(fp) != 0 && err == 0) err = errno != 0 ? errno : EIO;
    return err;
}

}  // namespace output_detail

/// Checks, before any work, that `f` can be written: not a directory, not a refused link, its
/// directory exists and a file can be created there. Throws perfcast::error with the reason.
inline void check_output(const output_file& f) {
    const output_detail::plan p = output_detail::plan_of(f);
    if (p.direct) return;  // a device or FIFO: opening it may block or have effects
    std::string tmp;
    std::FILE* fp = output_detail::open_temp(f, p.target, tmp);
    std::fclose(fp);
    std::remove(tmp.c_str());
}

/// Writes `content` as the whole of `f` (atomically for regular files; see the top).
inline void write_output(const output_file& f, std::string_view content) {
    namespace fs = std::filesystem;
    const output_detail::plan p = output_detail::plan_of(f);
    if (p.direct) {
        errno = 0;
        std::FILE* fp = std::fopen(p.target.string().c_str(), "wb");
        if (fp == nullptr) output_detail::fail_errno(f, "", errno);
        if (const int err = output_detail::write_close(fp, content)) {
            output_detail::fail_errno(f, "", err);
        }
        return;
    }
    std::string tmp;
    std::FILE* fp = output_detail::open_temp(f, p.target, tmp);
    if (const int err = output_detail::write_close(fp, content)) {
        std::remove(tmp.c_str());
        output_detail::fail_errno(f, "", err);
    }
    std::error_code ec;
    if (p.existed) {
        // Keep the old file's permission bits (a rename would otherwise reset them).
        const fs::file_status old = fs::status(p.target, ec);
        if (!ec) fs::permissions(tmp, old.permissions(), ec);
    }
    fs::rename(tmp, p.target, ec);
    if (ec) {
        std::remove(tmp.c_str());
        output_detail::fail(f, ec.message());
    }
}

/// Writes what `write(std::ostream&)` produces as the whole of `f`.
template <class Writer>
requires requires(Writer w, std::ostream& os) { w(os); }
void write_output(const output_file& f, Writer&& write) {
    std::ostringstream os;
    std::forward<Writer>(write)(os);
    if (!os) output_detail::fail(f, "the output could not be formatted");
    write_output(f, std::string_view(os.view()));
}

}  // namespace perfcast::io
