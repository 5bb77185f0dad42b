#include "core/word_vectors.h"

#include "core/init_draw.h"

namespace ae {

std::uint64_t fnv1a64(std::string_view text) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV offset basis
    for (const char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 0x100000001b3ULL;  // FNV prime
    }
    return hash;
}

VectorD wordVector(std::string_view text, int dModel) {
    SplitMix64 rng(fnv1a64(text));
    InitSpec spec;  // normal, std 1
    return drawMatrix(rng, spec, 1, dModel).row(0).transpose();
}

}  // namespace ae
