// What the fuzz targets share: a promise the reader made to the rows it gave, checked.
#pragma once

#include <cstdlib>

namespace perfcast_fuzz {

/// Aborts when `ok` is false: libFuzzer records the input as a crash (a broken promise is a
/// finding, as a sanitizer report is).
inline void expect(bool ok) {
    if (!ok) std::abort();
}

}  // namespace perfcast_fuzz
