// paynter/hash.h — the one hash paynter keys its caches and identifiers by.
//
// FNV-1a, 64 bits, over bytes: the stage cache's keys and checksums, the
// native code cache's keys, an FMU's GUID. Not for security: the caches also
// check who owns an entry before reading it (paynter/stage_cache.h).
#pragma once

#include <cstdint>
#include <string_view>

namespace paynter {

inline constexpr uint64_t kFnv1aOffset = 14695981039346656037ull;

// FNV-1a of `text`, starting from `h` (the offset basis, or another seed for
// a second, independent hash of the same bytes).
inline uint64_t Fnv1a64(std::string_view text, uint64_t h = kFnv1aOffset) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace paynter
