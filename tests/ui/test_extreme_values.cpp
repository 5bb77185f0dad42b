// Extreme values (docs/errors.md, "Overflow"): embeddings and every weight matrix and bias set to
// ±1e30, 1e20, 1e10, mixed signs, denormals and 0, in the float and the double engine. Every
// result is either finite in every stage, or a refusal that names the first stage that overflowed
// (`scores: overflow (values too large to represent)`); never a NaN or an infinity without a
// refusal.
// The same through the window (a typed value is refused and the old one kept, or the maps show
// finite numbers with finite colour ranges); through `export` in tests/cli/test_export_command.
#include <QFile>
#include <QImage>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <limits>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/extreme_scenes.h"
#include "support/grid_checks.h"
#include "ui/window/document_maps.h"

using namespace ae;
using namespace ae::test;

namespace {

struct Outcome {
    bool refused = false;
    QString stage, problem;
};

// Computes `scene` and checks the rule: every stage finite, or a refusal naming a stage. A
// refusal must be the first stage that is not finite: every stage before it is checked finite.
template <typename Scalar>
Outcome computeAndCheck(const Scene& scene) {
    AttentionEngine<Scalar> engine(scene);
    Outcome outcome;
    try {
        engine.compute();
    } catch (const SceneError& error) {
        outcome.refused = true;
        outcome.stage = QString::fromStdString(error.path());
        outcome.problem = QString::fromStdString(error.problem());
    }
    // What must still be finite, given the stage refused: Q and K are refused as the scores
    // they would spoil, V as the context, before the products (docs/errors.md, "Overflow").
    const QStringList refusable = {"x", "scores", "context", "output"};
    if (outcome.refused && (!refusable.contains(outcome.stage) || outcome.problem != kOverflow)) {
        QTest::qFail(qPrintable("unexpected refusal " + outcome.stage + ": " + outcome.problem),
                     __FILE__, __LINE__);
        return outcome;
    }
    const int refusedAt = outcome.refused ? static_cast<int>(refusable.indexOf(outcome.stage)) : 4;
    const auto finite = [&](const char* stage, bool ok) {
        if (!ok) {
            QTest::qFail(
                qPrintable(QStringLiteral("%1 is not finite, but %2")
                               .arg(stage)
                               .arg(outcome.refused ? "the refusal names " + outcome.stage
                                                    : QStringLiteral("nothing was refused"))),
                __FILE__, __LINE__);
        }
    };
    if (refusedAt >= 1) finite("x", engine.x().allFinite() && engine.xSource().allFinite());
    if (refusedAt >= 2) {
        finite("q", engine.query().allFinite());
        finite("k", engine.key().allFinite());
        // A V refused right after the projections leaves no scores computed to look at.
        const int computedHeads = engine.counters().scorePasses > 0 ? engine.heads() : 0;
        for (int h = 0; h < computedHeads; ++h) {
            finite("scores", engine.scores(h).allFinite() && engine.scaled(h).allFinite());
            finite("weights", engine.weights(h).allFinite());
            // Finite weights are a distribution over the visible keys.
            for (Eigen::Index i = 0; i < engine.weights(h).rows(); ++i) {
                const double sum = engine.weights(h).row(i).template cast<double>().sum();
                if (engine.allowed().row(i).any() && std::fabs(sum - 1.0) > 1e-4)
                    QTest::qFail(qPrintable(QStringLiteral("weights row sums to %1").arg(sum)),
                                 __FILE__, __LINE__);
            }
        }
    }
    if (refusedAt >= 3) {
        finite("v", engine.value().allFinite());
        finite("concat", engine.concat().allFinite());
    }
    if (refusedAt >= 4 && engine.hasOutput()) finite("output", engine.output().allFinite());
    return outcome;
}

}  // namespace

Q_DECLARE_METATYPE(ae::test::Target)

class TestExtremeValues : public QObject {
    Q_OBJECT
private slots:
    // Each target set to each value, in both engines, on a plain layer and on GPT-2's shape
    // (learned positions, layer norm, causal mask).
    void everyStageFiniteOrRefused_data() {
        QTest::addColumn<QString>("base");
        QTest::addColumn<Target>("target");
        QTest::addColumn<double>("value");
        QTest::addColumn<bool>("mixed");
        const double denormal = std::numeric_limits<double>::denorm_min();
        const double floatDenormal = std::numeric_limits<float>::denorm_min();
        for (const char* base : {"plain", "gpt2-style"}) {
            for (int t = 0; t <= static_cast<int>(Target::OutputBias); ++t) {
                const auto target = static_cast<Target>(t);
                for (const auto& [name, value, mixed] :
                     {std::tuple{"1e30", 1e30, false}, std::tuple{"-1e30", -1e30, false},
                      std::tuple{"±1e30", 1e30, true}, std::tuple{"1e20", 1e20, false},
                      std::tuple{"±1e20", 1e20, true}, std::tuple{"1e10", 1e10, false},
                      std::tuple{"double denormal", denormal, true},
                      std::tuple{"float denormal", floatDenormal, true},
                      std::tuple{"0", 0.0, false}}) {
                    QTest::addRow("%s, %s = %s", base, targetName(target), name)
                        << QString(base) << target << value << mixed;
                }
            }
        }
    }
    void everyStageFiniteOrRefused() {
        QFETCH(QString, base);
        QFETCH(Target, target);
        QFETCH(double, value);
        QFETCH(bool, mixed);
        Scene scene = base == "plain" ? plainScene() : io::loadPreset(base);
        setTarget(scene, target, value, mixed);
        const Outcome inDouble = computeAndCheck<double>(scene);
        const Outcome inFloat = computeAndCheck<float>(scene);
        // Double has the wider range: whatever it refuses, float refuses too.
        if (inDouble.refused) QVERIFY(inFloat.refused);
        // Nothing up to 1e30 overflows a double (1e30 · 1e30 · d is far from 1e308).
        QVERIFY2(!inDouble.refused, qPrintable(inDouble.stage));
    }

    // The projections in float: 1e30 · 1e30 is past float's 3.4e38. Refused right after the
    // projections, before any score product is computed, as the stage they would spoil (Q, K:
    // scores; V: context); in double the same layer is finite.
    void projectionOverflowNamedInFloat_data() {
        QTest::addColumn<Target>("weight");
        QTest::addColumn<QString>("stage");
        QTest::newRow("W_Q") << Target::Query << "scores";
        QTest::newRow("W_K") << Target::Key << "scores";
        QTest::newRow("W_V") << Target::Value << "context";
    }
    void projectionOverflowNamedInFloat() {
        QFETCH(Target, weight);
        QFETCH(QString, stage);
        Scene scene = plainScene();
        setTarget(scene, Target::Embeddings, 1e30, false);
        setTarget(scene, weight, 1e30, false);
        const Outcome inFloat = computeAndCheck<float>(scene);
        QVERIFY(inFloat.refused);
        QCOMPARE(inFloat.stage, stage);
        QCOMPARE(inFloat.problem, kOverflow);
        AttentionEngine<float> engine(scene);
        QVERIFY_THROWS_EXCEPTION(SceneError, engine.compute());
        QCOMPARE(engine.counters().fullProjections, 1L);
        QCOMPARE(engine.counters().scorePasses, 0L);  // refused before the products
        QVERIFY(!computeAndCheck<double>(scene).refused);
    }

    // Values finite in double but past float's range are refused as x by the float engine.
    void inputsBeyondFloatRefusedAsX() {
        Scene scene = plainScene();
        scene.embeddings(1, 2) = 1e39;
        const Outcome inFloat = computeAndCheck<float>(scene);
        QCOMPARE(inFloat.stage, QStringLiteral("x"));
        QVERIFY(!computeAndCheck<double>(scene).refused);
    }

    // One edited cell goes through the engine's row update, which checks its row as a full
    // pass would; the value put back recomputes cleanly.
    void editedRowOverflowRefusedAndRecovers() {
        Scene scene = plainScene();
        setTarget(scene, Target::Query, 1e20, false);
        AttentionEngine<float> engine(scene);
        engine.compute();
        const double old = scene.embeddings(2, 1);
        engine.setEmbeddingValue(Stream::Query, 2, 1, 1e30);
        try {
            engine.compute();
            QFAIL("not refused");
        } catch (const SceneError& error) {
            QCOMPARE(QString::fromStdString(error.path()), QStringLiteral("scores"));
        }
        engine.setEmbeddingValue(Stream::Query, 2, 1, old);
        engine.compute();
        AttentionEngine<float> fresh(scene);
        fresh.compute();
        QVERIFY(engine.output().isApprox(fresh.output(), 1e-5f));
    }

    // Double overflows too, at its own scale: 1e200 · 1e200.
    void doubleOverflowRefused() {
        Scene scene = plainScene();
        setTarget(scene, Target::Embeddings, 1e200, false);
        setTarget(scene, Target::Query, 1e200, false);
        const Outcome inDouble = computeAndCheck<double>(scene);
        QCOMPARE(inDouble.stage, QStringLiteral("scores"));
        Scene scores = plainScene();
        setTarget(scores, Target::Embeddings, 1e160, false);  // Q, K ~1e160: Q·Kᵀ ~1e320
        QCOMPARE(computeAndCheck<double>(scores).stage, QStringLiteral("scores"));
    }

    // ------------------------------------------------------------ the window
    // Typing 1e30 into an embedding cell: refused with the stage and the old value kept, or
    // accepted with finite maps; either way the colour ranges are finite and no cell is NaN.
    void typedExtremeValueInTheWindow_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<double>("value");
        QTest::addColumn<bool>("refused");
        // Identity: X = embeddings, so 1e15 makes scores of ~1e30 (finite in float) and 1e30
        // makes them ~1e60 (refused). With weights, 1e30 · W is already refused at q.
        QTest::newRow("identity, 1e15") << "identity" << 1e15 << false;
        QTest::newRow("identity, 1e30") << "identity" << 1e30 << true;
        QTest::newRow("four-words, 1e30") << "four-words" << 1e30 << true;
        QTest::newRow("four-words, -1e10") << "four-words" << -1e10 << false;
        QTest::newRow("gpt2-style, 1e30 (layer norm)") << "gpt2-style" << 1e30 << false;
    }
    void typedExtremeValueInTheWindow() {
        QFETCH(QString, preset);
        QFETCH(double, value);
        QFETCH(bool, refused);
        document::AttentionDocument document;
        plot::HeatmapGrid grid;
        ui::DocumentMaps gridFollowsDocument(&document, &grid);
        grid.resize(1000, 760);
        document.resetScene(io::loadPreset(preset));
        grid.setViewMode(plot::ViewMode::AllStages);
        grid.show();
        QVERIFY(QTest::qWaitForWindowExposed(&grid));
        const double old = document.scene().embeddings(0, 0);
        QString error;
        const bool accepted = document.setEmbeddingValue(Stream::Query, 0, 0, value, &error);
        QCOMPARE(!accepted, refused);
        if (refused) {
            QVERIFY2(error.contains(": overflow (values too large to represent); kept "),
                     qPrintable(error));
            QCOMPARE(document.scene().embeddings(0, 0), old);
            QCOMPARE(document.undoStack()->count(), 0);
        } else {
            QCOMPARE(document.scene().embeddings(0, 0), value);
        }
        QVERIFY(document.errorText().isEmpty());
        QCoreApplication::processEvents();
        test::verifyMapsFinite(grid);
        if (QTest::currentTestFailed()) return;
        const QImage image = grid.grab().toImage();
        QVERIFY(!image.isNull());
        if (qEnvironmentVariableIsSet("AE_LIMITS_PNG_DIR")) {
            image.save(qEnvironmentVariable("AE_LIMITS_PNG_DIR") + "/extreme-" + preset + "-" +
                       QString::number(value) + ".png");
        }
    }
};

QTEST_MAIN(TestExtremeValues)
#include "test_extreme_values.moc"
