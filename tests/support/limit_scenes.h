#pragma once
// Shared by the size-limit tests in the window (tests/ui/test_limits) and through the commands
// (tests/cli/test_size_limits): the smallest layer, a layer too large for this machine, and the
// refusal message with its estimate.

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <cmath>

#include "core/scene.h"

namespace ae::test {

// One token of width 1, separate 1 x 1 projections with biases and a 1 x 1 output projection.
inline Scene tinyScene() {
    Scene s;
    s.title = "tiny";
    s.tokens = {"a"};
    s.embeddings = MatrixD::Constant(1, 1, 0.5);
    Projections& p = s.projections;
    p.mode = ProjectionMode::Separate;
    p.query = MatrixD::Constant(1, 1, 2.0);
    p.key = MatrixD::Constant(1, 1, -1.0);
    p.value = MatrixD::Constant(1, 1, 3.0);
    p.queryBias = VectorD::Constant(1, 0.25);
    p.keyBias = VectorD::Constant(1, 0.5);
    p.valueBias = VectorD::Constant(1, -0.5);
    p.hasOutput = true;
    p.output = MatrixD::Constant(1, 1, 1.5);
    p.outputBias = VectorD::Constant(1, 0.125);
    s.heads = 1;
    return s;
}

// The message a refusal must carry: the estimate, as the same function computes it, and the
// machine's memory.
inline QString expectedRefusal(double bytes, const char* what) {
    return QString::fromStdString("scene: too large: needs about " + gibibytesText(bytes) + " (" +
                                  what + "), this machine has " +
                                  gibibytesText(physicalMemoryBytes()));
}

// A layer whose score matrices alone need `factor` times this machine's memory in double: N tokens
// of width 64 in 64 heads of width 1 (3 x 64 x N^2 doubles), drawn by init so the file stays small.
inline QByteArray hugeSceneJson(double factor, int* tokens) {
    const double memory = physicalMemoryBytes();
    const int n = static_cast<int>(std::ceil(std::sqrt(factor * memory / (3.0 * 64 * 8))));
    QStringList names;
    for (int i = 0; i < n; ++i)
        names << QStringLiteral("\"t%1\"").arg(i);
    *tokens = n;
    return QStringLiteral(R"({"format": "attention-explorer/scene", "version": 1, "tokens": [%1],
        "init": {"seed": 7, "d_model": 64}, "heads": 64})")
        .arg(names.join(','))
        .toUtf8();
}

}  // namespace ae::test
