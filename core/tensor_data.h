#pragma once
// Stored tensor elements (the float dtypes of .safetensors files) read as numbers: one home for
// the conversions, used by io/formats/safetensors.cpp (import) and the whole-model engine
// (core/model/model.h), which reads weights straight from a memory-mapped file. No Qt: bytes in,
// numbers out.
//
// Bytes are little-endian, as the format stores them; the engine only builds on little-endian
// machines (checked below), so an element is read with a memcpy.

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "core/tensor_data.h reads little-endian tensor bytes in place: a big-endian host needs swaps"
#endif

namespace ae {

enum class DType { F32, F16, BF16, F64 };

// "F32", "F16", "BF16", "F64".
inline const char* dtypeName(DType t) {
    switch (t) {
        case DType::F32:
            return "F32";
        case DType::F16:
            return "F16";
        case DType::BF16:
            return "BF16";
        case DType::F64:
            return "F64";
    }
    return "?";
}
inline int dtypeSize(DType t) {
    return t == DType::F64 ? 8 : t == DType::F32 ? 4 : 2;
}
// False for names that are not one of the four float dtypes.
inline bool dtypeFromName(const std::string& name, DType* out) {
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
        if (name == dtypeName(t)) {
            *out = t;
            return true;
        }
    }
    return false;
}

// IEEE binary16 → float, exactly (every half is a float).
inline float halfToFloat(std::uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    const float sign = (h & 0x8000) ? -1.0f : 1.0f;
    if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), -24);
    if (exponent == 31) {
        return mantissa == 0 ? sign * std::numeric_limits<float>::infinity()
                             : std::numeric_limits<float>::quiet_NaN();
    }
    return sign * std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
}

// bfloat16 is the top half of a float32, so shifting it back up gives the float exactly.
inline float bfloat16ToFloat(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Elements [first, first + count) of a tensor stored as `dtype` at `data`, as Scalar (float or
// double). F64 to float rounds; every other conversion is exact.
template <typename Scalar>
void convertElements(const unsigned char* data, DType dtype, long long first, long long count,
                     Scalar* out) {
    const unsigned char* p = data + first * dtypeSize(dtype);
    switch (dtype) {
        case DType::F32:
            for (long long k = 0; k < count; ++k) {
                float f;
                std::memcpy(&f, p + 4 * k, 4);
                out[k] = static_cast<Scalar>(f);
            }
            break;
        case DType::F64:
            for (long long k = 0; k < count; ++k) {
                double f;
                std::memcpy(&f, p + 8 * k, 8);
                out[k] = static_cast<Scalar>(f);
            }
            break;
        case DType::F16:
            for (long long k = 0; k < count; ++k) {
                std::uint16_t h;
                std::memcpy(&h, p + 2 * k, 2);
                out[k] = static_cast<Scalar>(halfToFloat(h));
            }
            break;
        case DType::BF16:
            for (long long k = 0; k < count; ++k) {
                std::uint16_t h;
                std::memcpy(&h, p + 2 * k, 2);
                out[k] = static_cast<Scalar>(bfloat16ToFloat(h));
            }
            break;
    }
}

// Index of the first element of `count` stored as `dtype` that is ±inf or NaN, or -1. Reads the
// exponent bits only (all ones means not finite), so a scan of a model's weights runs at memory
// speed and converts nothing.
inline long long firstNonFinite(const unsigned char* data, DType dtype, long long count) {
    if (dtype == DType::F64) {
        for (long long k = 0; k < count; ++k) {
            std::uint64_t bits;
            std::memcpy(&bits, data + 8 * k, 8);
            if ((bits & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) return k;
        }
        return -1;
    }
    if (dtype == DType::F32) {
        // Blocks of 256 are tested with one OR-free reduction first: branch-free, vectorisable.
        long long k = 0;
        for (; k + 256 <= count; k += 256) {
            unsigned bad = 0;
            for (int i = 0; i < 256; ++i) {
                std::uint32_t bits;
                std::memcpy(&bits, data + 4 * (k + i), 4);
                bad |= (bits & 0x7f800000u) == 0x7f800000u;
            }
            if (bad) break;
        }
        for (; k < count; ++k) {
            std::uint32_t bits;
            std::memcpy(&bits, data + 4 * k, 4);
            if ((bits & 0x7f800000u) == 0x7f800000u) return k;
        }
        return -1;
    }
    const std::uint16_t mask = dtype == DType::F16 ? 0x7c00 : 0x7f80;
    long long k = 0;
    for (; k + 256 <= count; k += 256) {
        unsigned bad = 0;
        for (int i = 0; i < 256; ++i) {
            std::uint16_t bits;
            std::memcpy(&bits, data + 2 * (k + i), 2);
            bad |= (bits & mask) == mask;
        }
        if (bad) break;
    }
    for (; k < count; ++k) {
        std::uint16_t bits;
        std::memcpy(&bits, data + 2 * k, 2);
        if ((bits & mask) == mask) return k;
    }
    return -1;
}

}  // namespace ae
