// The memory estimate (engineBytes) is exactly what an engine holds, and a scene too large for
// the machine is refused before anything that size is allocated.
#include <QTest>

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

class TestMemoryCheck : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ memory
    void engineBytesMatchesWhatTheEngineHolds_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : aetest::goldenNames())
            QTest::newRow(qPrintable(name)) << name;
    }
    void engineBytesMatchesWhatTheEngineHolds() {
        QFETCH(QString, name);
        const Scene scene = golden(name);
        checkHeldBytes<double>(scene);
        checkHeldBytes<float>(scene);
        ae::checkFitsInMemory(scene, sizeof(double), 24.0);  // must not throw
    }

    // A scene that would need about a terabyte is refused before anything that size exists:
    // only its 200000 x 1 embeddings are allocated, never an engine.
    void hugeSceneRefusedBeforeAllocating() {
        const double memory = ae::physicalMemoryBytes();
        if (memory <= 0) QSKIP("physical memory unknown on this machine");
        Scene s;
        const int tokens = 200000;
        s.tokens.assign(tokens, "t");
        s.embeddings = MatrixD::Ones(tokens, 1);
        s.projections.mode = ae::ProjectionMode::Identity;
        const double bytes = ae::engineBytes(s, sizeof(double));
        // 3 score-sized matrices of 200000^2 doubles dominate: 9.6e11 bytes.
        QVERIFY(bytes >= 3.0 * tokens * static_cast<double>(tokens) * 8);
        if (bytes <= memory) QSKIP("this machine has more than a terabyte of memory");
        try {
            ae::checkFitsInMemory(s, sizeof(double));
            QFAIL("not refused");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.path()), QStringLiteral("scene"));
            QVERIFY2(QString::fromStdString(e.problem()).startsWith("too large: needs about "),
                     e.what());
        }
        // Float halves the need but still does not fit; the extra bytes per number count too.
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, ae::checkFitsInMemory(s, sizeof(float)));
        // The stages and converted weights halve; the scene's own doubles and the bool mask do not.
        const double fixed = ae::sceneBytes(s) + static_cast<double>(tokens) * tokens;
        QCOMPARE(ae::engineBytes(s, sizeof(float)) - fixed, (bytes - fixed) / 2);
    }

private:
    template <typename Scalar>
    static void checkHeldBytes(const Scene& scene) {
        AttentionEngine<Scalar> e(scene);
        e.compute();
        // The stages counted from the accessors must agree with heldBytes(), which also counts
        // the engine's scene copy, its converted weights and its mask arrays.
        double stages = static_cast<double>(e.x().size() + e.query().size() + e.value().size() +
                                            e.concat().size() + e.output().size());
        if (scene.hasSource) stages += static_cast<double>(e.xSource().size());
        if (&e.key() != &e.query()) stages += static_cast<double>(e.key().size());
        for (int h = 0; h < e.heads(); ++h) {
            stages +=
                static_cast<double>(e.scores(h).size() + e.scaled(h).size() + e.weights(h).size());
        }
        const double cells = static_cast<double>(scene.queryCount()) * scene.keyCount();
        QVERIFY(e.heldBytes() > stages * sizeof(Scalar) + 2 * cells * sizeof(Scalar));
        const double estimate = ae::engineBytes(scene, sizeof(Scalar));
        QVERIFY2(
            estimate == e.heldBytes(),
            qPrintable(QStringLiteral("engineBytes %1, held %2").arg(estimate).arg(e.heldBytes())));
    }
};

QTEST_GUILESS_MAIN(TestMemoryCheck)
#include "test_memory_check.moc"
