#pragma once
// Shared by the extreme-value tests in the window (tests/ui/test_extreme_values) and through
// `export` (tests/cli/test_export_command): a plain layer whose embeddings, weights and biases can
// each be set to one value.

#include <QString>

#include "core/init_draw.h"
#include "core/scene.h"

namespace ae::test {

inline const QString kOverflow = QStringLiteral("overflow (values too large to represent)");

// L = 4, d = 4, d_proj = 4, two heads, biases and an output projection; no norm, so the embeddings
// reach the projections as they are.
inline Scene plainScene() {
    InitSpec spec;
    spec.seed = 11;
    spec.output = true;
    spec.bias = true;
    SplitMix64 rng(spec.seed);
    Scene s;
    s.tokens = {"a", "b", "c", "d"};
    s.embeddings = drawMatrix(rng, spec, 4, 4);
    s.projections = drawProjections(rng, spec, 4);
    s.projections.queryBias = VectorD::LinSpaced(4, -0.5, 0.5);
    s.projections.keyBias = VectorD::LinSpaced(4, 0.25, -0.25);
    s.projections.valueBias = VectorD::LinSpaced(4, 1.0, 2.0);
    s.projections.outputBias = VectorD::LinSpaced(4, -1.0, 1.0);
    s.heads = 2;
    return s;
}

enum class Target {
    Embeddings,
    Query,
    Key,
    Value,
    Output,
    QueryBias,
    KeyBias,
    ValueBias,
    OutputBias
};

inline const char* targetName(Target t) {
    static const char* names[] = {"embeddings", "W_Q", "W_K", "W_V", "W_O",
                                  "b_Q",        "b_K", "b_V", "b_O"};
    return names[static_cast<int>(t)];
}

// Fills `m` with `value`, alternating its sign cell by cell when `mixed`.
template <typename M>
inline void fillWith(M& m, double value, bool mixed) {
    for (Eigen::Index k = 0; k < m.size(); ++k)
        m.data()[k] = mixed && k % 2 ? -value : value;
}

inline void setTarget(Scene& s, Target t, double value, bool mixed) {
    Projections& p = s.projections;
    switch (t) {
        case Target::Embeddings:
            return fillWith(s.embeddings, value, mixed);
        case Target::Query:
            return fillWith(p.query, value, mixed);
        case Target::Key:
            return fillWith(p.key, value, mixed);
        case Target::Value:
            return fillWith(p.value, value, mixed);
        case Target::Output:
            return fillWith(p.output, value, mixed);
        case Target::QueryBias:
            return fillWith(p.queryBias, value, mixed);
        case Target::KeyBias:
            return fillWith(p.keyBias, value, mixed);
        case Target::ValueBias:
            return fillWith(p.valueBias, value, mixed);
        case Target::OutputBias:
            return fillWith(p.outputBias, value, mixed);
    }
}

}  // namespace ae::test
