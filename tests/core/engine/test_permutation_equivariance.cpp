// Reordering the tokens of a scene without positions or order-dependent masks reorders every
// stage the same way (the rows, and the score cells by query and key), to rounding.
#include <QTest>
#include <algorithm>
#include <numeric>
#include <random>
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

class TestPermutationEquivariance : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ permutation equivariance
    void permutationEquivariance_data() {
        QTest::addColumn<Scene>("scene");
        for (const char* name :
             {"four-words", "journey", "bert-style", "shared-qk", "identity", "init-integers"}) {
            QTest::newRow(name) << golden(name);
        }
        Scene gpt = golden("gpt2-style");  // layer norm and an output projection
        gpt.positional = {};
        gpt.mask = {};
        QTest::newRow("gpt2-style without positions or mask") << gpt;
        Scene cross = golden("cross");
        cross.mask = {};
        QTest::newRow("cross without mask") << cross;
    }
    void permutationEquivariance() {
        QFETCH(Scene, scene);
        QCOMPARE(scene.positional.kind, ae::PositionalKind::None);
        QVERIFY(!scene.mask.causal && !scene.mask.window && !scene.mask.allowed);
        const int lq = scene.queryCount(), lk = scene.keyCount();
        std::mt19937 random(20260101u + static_cast<unsigned>(lq * 31 + lk));
        std::vector<int> perm(lq), sourcePerm(lk);
        do {
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), random);
        } while (lq > 1 && std::is_sorted(perm.begin(), perm.end()));
        std::iota(sourcePerm.begin(), sourcePerm.end(), 0);
        if (scene.hasSource) std::shuffle(sourcePerm.begin(), sourcePerm.end(), random);
        const std::vector<int>& keyPerm = scene.hasSource ? sourcePerm : perm;

        Scene permuted = scene;
        for (int i = 0; i < lq; ++i)
            permuted.embeddings.row(i) = scene.embeddings.row(perm[i]);
        for (int j = 0; j < lk; ++j) {
            if (scene.hasSource)
                permuted.sourceEmbeddings.row(j) = scene.sourceEmbeddings.row(sourcePerm[j]);
            if (!scene.mask.padding.empty())
                permuted.mask.padding[j] = scene.mask.padding[keyPerm[j]];
        }
        AttentionEngine<double> a(scene), b(permuted);
        a.compute();
        b.compute();

        aetest::Comparison c;
        const auto rows = [&](const MatrixD& m) {
            MatrixD out(m.rows(), m.cols());
            for (int i = 0; i < m.rows(); ++i)
                out.row(i) = m.row(perm[i]);
            return out;
        };
        const auto cells = [&](const MatrixD& m) {
            MatrixD out(m.rows(), m.cols());
            for (int i = 0; i < m.rows(); ++i) {
                for (int j = 0; j < m.cols(); ++j)
                    out(i, j) = m(perm[i], keyPerm[j]);
            }
            return out;
        };
        c.matrix("x", b.x(), rows(a.x()));
        c.matrix("q", b.query(), rows(a.query()));
        for (int h = 0; h < a.heads(); ++h) {
            const QString head = QStringLiteral("heads[%1].").arg(h);
            c.matrix(head + "scores", b.scores(h), cells(a.scores(h)));
            c.matrix(head + "weights", b.weights(h), cells(a.weights(h)));
            c.matrix(head + "context", b.context(h), rows(a.context(h)));
        }
        c.matrix("concat", b.concat(), rows(a.concat()));
        if (a.hasOutput()) c.matrix("output", b.output(), rows(a.output()));
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
    }
};

QTEST_GUILESS_MAIN(TestPermutationEquivariance)
#include "test_permutation_equivariance.moc"
