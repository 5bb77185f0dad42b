#pragma once
// Vectors for typed words. A word that is not in the scene yet needs an embedding; deriving it from
// the word's own bytes (not from a counter or the clock) means the same word gets the same vector
// in every sentence, in every session and on every machine, so a class can compare screens.

#include <cstdint>
#include <string_view>

#include "core/scene.h"

namespace ae {

// FNV-1a, 64 bits, over the bytes of `text` (UTF-8: "café" is hashed as its 5 bytes).
std::uint64_t fnv1a64(std::string_view text);

// dModel values for `text`: normal, std 1, drawn by SplitMix64 seeded with fnv1a64(text), in the
// draw order of init (two uniforms per value). Value i does not depend on dModel, so widening
// d_model only appends values to a word's vector.
VectorD wordVector(std::string_view text, int dModel);

}  // namespace ae
