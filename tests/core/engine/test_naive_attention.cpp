// The engine agrees with single-head attention written out from the definitions with plain
// loops (scores, weights, context, output), for every kind of mask, scale and projection mode.
#include <QTest>
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/result_check.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::builtScene;
using aetest::golden;
using aetest::Inputs;
using aetest::kExact;
using aetest::Numbers;

namespace {

// ---------------------------------------------------------------- naive attention, one head
using Table = std::vector<std::vector<double>>;

Table table(const MatrixD& m) {
    Table t(static_cast<size_t>(m.rows()), std::vector<double>(static_cast<size_t>(m.cols())));
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            t[i][j] = m(i, j);
    }
    return t;
}

MatrixD matrixOf(const Table& t) {
    MatrixD m(static_cast<Eigen::Index>(t.size()), static_cast<Eigen::Index>(t[0].size()));
    for (size_t i = 0; i < t.size(); ++i) {
        for (size_t j = 0; j < t[0].size(); ++j)
            m(i, j) = t[i][j];
    }
    return m;
}

// x·w + b with loops; an empty w is the identity.
Table project(const Table& x, const MatrixD& w, const ae::VectorD& b) {
    if (w.size() == 0) return x;
    Table out(x.size(), std::vector<double>(static_cast<size_t>(w.cols()), 0.0));
    for (size_t i = 0; i < x.size(); ++i) {
        for (Eigen::Index c = 0; c < w.cols(); ++c) {
            double sum = 0;
            for (size_t k = 0; k < x[i].size(); ++k)
                sum += x[i][k] * w(static_cast<Eigen::Index>(k), c);
            out[i][c] = sum + (b.size() ? b(c) : 0.0);
        }
    }
    return out;
}

struct Naive {
    Table scores, weights, context, output;
};

// Single-head attention written out from the definitions, for scenes without positions or norm.
Naive naiveAttention(const Scene& s) {
    const ae::Projections& p = s.projections;
    const Table xq = table(s.embeddings);
    const Table xk = s.hasSource ? table(s.sourceEmbeddings) : xq;
    const bool identity = p.mode == ae::ProjectionMode::Identity;
    const bool shared = p.mode == ae::ProjectionMode::SharedQK;
    const Table q = project(xq, identity ? MatrixD() : p.query, p.queryBias);
    const Table k = project(xk, identity ? MatrixD() : (shared ? p.query : p.key),
                            shared ? p.queryBias : p.keyBias);
    const Table v = project(xk, identity ? MatrixD() : p.value, p.valueBias);
    const size_t lq = q.size(), lk = k.size(), dk = q[0].size();
    double divisor = 1.0;
    switch (s.scale.kind) {
        case ae::ScaleKind::SqrtDk:
            divisor = std::sqrt(static_cast<double>(dk));
            break;
        case ae::ScaleKind::SqrtDmodel:
            divisor = std::sqrt(static_cast<double>(xq[0].size()));
            break;
        case ae::ScaleKind::None:
            divisor = 1.0;
            break;
        case ae::ScaleKind::Divisor:
            divisor = s.scale.divisor;
            break;
    }
    Naive r;
    r.scores.assign(lq, std::vector<double>(lk));
    r.weights.assign(lq, std::vector<double>(lk));
    r.context.assign(lq, std::vector<double>(v[0].size(), 0.0));
    for (size_t i = 0; i < lq; ++i) {
        std::vector<double> row(lk);
        bool anyVisible = false;
        for (size_t j = 0; j < lk; ++j) {
            double dot = 0;
            for (size_t c = 0; c < dk; ++c)
                dot += q[i][c] * k[j][c];
            r.scores[i][j] = dot;
            bool visible = !(s.mask.causal && j > i);
            if (s.mask.window &&
                std::abs(static_cast<long>(i) - static_cast<long>(j)) > *s.mask.window)
                visible = false;
            if (!s.mask.padding.empty() && s.mask.padding[j]) visible = false;
            if (s.mask.allowed && !(*s.mask.allowed)(i, j)) visible = false;
            anyVisible = anyVisible || visible;
            row[j] = visible ? dot / divisor : s.maskFill;
        }
        if (!anyVisible && std::isinf(s.maskFill)) continue;  // no key: no attention
        const double top = *std::max_element(row.begin(), row.end());
        double total = 0;
        for (size_t j = 0; j < lk; ++j)
            total += r.weights[i][j] = std::exp(row[j] - top);
        for (size_t j = 0; j < lk; ++j)
            r.weights[i][j] /= total;
        for (size_t j = 0; j < lk; ++j) {
            for (size_t c = 0; c < v[0].size(); ++c)
                r.context[i][c] += r.weights[i][j] * v[j][c];
        }
    }
    if (p.hasOutput) r.output = project(r.context, p.output, p.outputBias);
    return r;
}

}  // namespace

class TestNaiveAttention : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ naive single head
    void naiveSingleHead_data() {
        QTest::addColumn<Scene>("scene");
        for (const char* name : {"journey", "four-words", "journey-causal", "shared-qk", "identity",
                                 "cross", "blind-row", "blind-row-finite", "tutorial-variant",
                                 "window", "bert-style", "huge-scores", "init-integers"}) {
            Scene s = golden(name);
            s.heads = 1;
            QTest::newRow(name) << s;
        }
        Scene divided = golden("journey");
        divided.scale = {ae::ScaleKind::Divisor, 0.37};
        QTest::newRow("journey, divisor 0.37") << divided;
        Scene byModel = golden("cross");
        byModel.heads = 1;
        byModel.scale = {ae::ScaleKind::SqrtDmodel, 1.0};
        QTest::newRow("cross, sqrt_dmodel") << byModel;
    }
    void naiveSingleHead() {
        QFETCH(Scene, scene);
        QCOMPARE(scene.positional.kind, ae::PositionalKind::None);
        QVERIFY(!scene.norm.enabled);
        const Naive naive = naiveAttention(scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        aetest::Comparison c;
        c.matrix("scores", engine.scores(0), matrixOf(naive.scores));
        c.matrix("weights", engine.weights(0), matrixOf(naive.weights));
        c.matrix("context", engine.context(0), matrixOf(naive.context));
        if (scene.projections.hasOutput)
            c.matrix("output", engine.output(), matrixOf(naive.output));
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
    }
};

QTEST_GUILESS_MAIN(TestNaiveAttention)
#include "test_naive_attention.moc"
