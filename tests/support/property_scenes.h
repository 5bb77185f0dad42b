#pragma once
// Shared by the engine property tests (test_softmax_masks, test_permutation_equivariance,
// test_naive_attention, test_engine_cache, test_init_draw, test_memory_check): golden scenes,
// small scenes built here from a fixed stream of numbers, and exact comparisons of two engines.

#include <QString>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/attention_engine.h"
#include "core/scene.h"
#include "io/scene/scene_file.h"
#include "result_check.h"

Q_DECLARE_METATYPE(ae::ProjectionMode)

namespace aetest {

inline constexpr double kExact = 1e-12;  // double against double: only rounding-order differences

inline ae::Scene golden(const QString& name) {
    return ae::io::loadSceneFile(dataPath(name + ".scene.json"));
}

template <typename A, typename B>
bool bitIdentical(const A& a, const B& b) {
    using Scalar = typename A::Scalar;
    static_assert(std::is_same_v<Scalar, typename B::Scalar>);
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           (a.size() == 0 ||
            std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(Scalar)) == 0);
}

template <typename Scalar>
Comparison compareEngines(const ae::AttentionEngine<Scalar>& got,
                          const ae::AttentionEngine<Scalar>& expected) {
    return compareResults(resultFromEngine(got), resultFromEngine(expected));
}

// A fixed stream of numbers in [-1, 1) for scenes built here (independent of the engine's init).
class Numbers {
public:
    explicit Numbers(std::uint32_t seed) : state_(seed) {}
    double next() {
        state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state_ >> 11) * 0x1.0p-52 - 1.0;
    }
    ae::MatrixD matrix(int rows, int cols) {
        ae::MatrixD m(rows, cols);
        for (Eigen::Index i = 0; i < m.size(); ++i)
            m.data()[i] = next();
        return m;
    }
    ae::VectorD vector(int n) { return matrix(n, 1).col(0); }

private:
    std::uint64_t state_;
};

enum class Inputs { Plain, Norm, Sinusoidal, Learned, NormAndSinusoidal };

// A small valid scene: 5 query tokens, 4 source tokens when `cross`, d_model 6, d_proj 4 (6 in
// identity mode), 2 heads, biases and an output projection where the mode has them.
inline ae::Scene builtScene(ae::ProjectionMode mode, bool cross, Inputs inputs) {
    Numbers n(7 + static_cast<int>(mode) * 10 + cross * 100 + static_cast<int>(inputs) * 1000);
    ae::Scene s;
    const int lq = 5, lk = cross ? 4 : 5, d = 6;
    const int dp = mode == ae::ProjectionMode::Identity ? d : 4;
    s.tokens = {"a", "b", "c", "d", "e"};
    s.embeddings = n.matrix(lq, d) * 2.0;
    if (cross) {
        s.hasSource = true;
        s.sourceTokens = {"w", "x", "y", "z"};
        s.sourceEmbeddings = n.matrix(lk, d) * 2.0;
        s.mask.padding = {false, false, true, false};
    } else {
        s.mask.causal = true;
    }
    if (inputs == Inputs::Sinusoidal || inputs == Inputs::NormAndSinusoidal) {
        s.positional.kind = ae::PositionalKind::Sinusoidal;
    } else if (inputs == Inputs::Learned) {
        s.positional.kind = ae::PositionalKind::Learned;
        s.positional.table = n.matrix(6, d);
    }
    if (inputs == Inputs::Norm || inputs == Inputs::NormAndSinusoidal) {
        s.norm.enabled = true;
        s.norm.weight = n.vector(d).array() + 1.5;
        s.norm.bias = n.vector(d);
    }
    ae::Projections& p = s.projections;
    p.mode = mode;
    if (mode != ae::ProjectionMode::Identity) {
        p.query = n.matrix(d, dp);
        if (mode == ae::ProjectionMode::Separate) p.key = n.matrix(d, dp);
        p.value = n.matrix(d, dp);
        p.queryBias = n.vector(dp);
        p.keyBias = mode == ae::ProjectionMode::Separate ? n.vector(dp) : p.queryBias;
        p.valueBias = n.vector(dp);
    } else {
        p.queryBias = p.keyBias = p.valueBias = ae::VectorD::Zero(dp);
    }
    p.hasOutput = true;
    p.output = n.matrix(dp, 3);
    p.outputBias = n.vector(3);
    s.heads = 2;
    return s;
}

}  // namespace aetest
