// A version 2 scene (a model layer) in the window's document and editors: nothing crashes, the
// editors that cannot edit a version 2 field leave it alone, the head count of a grouped layer is
// refused with a message, and every edit leaves results a fresh engine agrees with.
#include <QCheckBox>
#include <QComboBox>
#include <QSpinBox>
#include <QtTest>

#include "core/attention_engine.h"
#include "io/formats/matrix_files.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/editor_checks.h"
#include "support/property_scenes.h"
#include "support/result_check.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/files/scene_import.h"
#include "ui/window/document_maps.h"

using ae::MatrixD;
using ae::Scene;
using ae::document::WeightMatrix;

namespace {

Scene layer(const char* name) {
    return ae::io::loadSceneFile(
        aetest::dataPath(QStringLiteral("scene-v2/%1.scene.json").arg(name)));
}

}  // namespace

class TestSceneV2Window : public QObject, ae::test::EditorFixture {
    Q_OBJECT

    // The document's float results against a fresh float engine on its scene.
    void checkResults(const char* what) {
        document_->waitForResults();
        QVERIFY2(document_->errorText().isEmpty(),
                 qPrintable(QString(what) + ": " + document_->errorText()));
        ae::AttentionEngine<float> fresh(document_->scene());
        fresh.compute();
        const aetest::Comparison c = aetest::compareEngines(document_->engine(), fresh);
        QVERIFY2(c.within(1e-6), qPrintable(QString(what) + ": " + c.report(1e-6)));
    }

private slots:
    void init() { setUp(); }
    void cleanup() { tearDown(); }

    void groupedLayerInTheEditors_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("llama gqa") << "llama-gqa-layer1";
        QTest::newRow("qwen3") << "qwen3-layer0";
        QTest::newRow("rope scaled") << "llama-rope-scaled-layer1";
    }
    void groupedLayerInTheEditors() {
        QFETCH(QString, name);
        const Scene scene = layer(qPrintable(name));
        document_->resetScene(scene);
        checkResults("opened");

        // Another head count takes the kv heads along (the nearest count that divides it, K and
        // V pooled anew); a q/k norm, whose weights are head_dim wide, still keeps the count.
        QString error;
        const bool changed = document_->setHeads(2, &error);
        if (scene.qkNorm.enabled) {
            QVERIFY(!changed);
            QVERIFY2(error.startsWith("qk_norm:"), qPrintable(error));
        } else {
            QVERIFY2(changed, qPrintable(error));
            checkResults("2 heads");
            QCOMPARE(document_->scene().heads, 2);
            QCOMPARE(2 % document_->scene().keyValueHeads(), 0);
            document_->undoStack()->undo();
            checkResults("undo 2 heads");
        }
        QCOMPARE(document_->scene().heads, scene.heads);
        QCOMPARE(document_->scene().kvHeads, scene.kvHeads);

        // A weight of the narrower K, and an embedding value (row path through norm and rotary).
        const int lastKeyColumn = static_cast<int>(scene.projections.key.cols()) - 1;
        QVERIFY2(document_->setWeightValue(WeightMatrix::Key, 0, lastKeyColumn, 0.5, &error),
                 qPrintable(error));
        checkResults("a weight of K");
        QVERIFY2(document_->setEmbeddingValue(ae::Stream::Query, 3, 1, 0.25, &error),
                 qPrintable(error));
        checkResults("an embedding value");

        // d_proj from the weights editor: K and V are written out per head first.
        auto* dProj = child<QSpinBox>(weights_.get(), "dProjSpin");
        dProj->setValue(scene.dProj() + 8);
        checkResults("d_proj");
        QVERIFY(!document_->scene().kvHeads);
        QCOMPARE(document_->scene().dProj(), scene.dProj() + 8);
        QVERIFY(document_->scene().rotary.has_value());  // 72 / 4 heads = 18, even

        // d_model from the tokens editor keeps the grouping.
        document_->undoStack()->undo();
        checkResults("undo d_proj");
        QCOMPARE(document_->scene().kvHeads, scene.kvHeads);
        child<QSpinBox>(tokens_.get(), "dModelSpin")->setValue(scene.dModel() + 2);
        checkResults("d_model");
        QCOMPARE(document_->scene().kvHeads, scene.kvHeads);
        QCOMPARE(document_->scene().projections.key.cols(), scene.projections.key.cols());

        // The norm check box leaves the RMSNorm an RMSNorm.
        auto* norm = child<QCheckBox>(tokens_.get(), "layerNormCheck");
        norm->setChecked(false);
        checkResults("norm off");
        norm->setChecked(true);
        checkResults("norm on");
        QVERIFY(document_->scene().norm.kind == ae::NormKind::Rms);
        QCOMPARE(norm->text(), QStringLiteral("RMS norm"));  // says which norm it is
        QCOMPARE(document_->undoStack()->undoText(), QStringLiteral("RMS norm on"));

        // The projection mode: shared Q/K.
        auto* mode = child<QComboBox>(weights_.get(), "projectionModeCombo");
        mode->setCurrentIndex(mode->findData(int(ae::ProjectionMode::SharedQK)));
        checkResults("shared_qk");
        QVERIFY(document_->scene().projections.mode == ae::ProjectionMode::SharedQK);
        mode->setCurrentIndex(mode->findData(int(ae::ProjectionMode::Identity)));
        checkResults("identity");
    }

    // Importing W_K or W_V into a grouped layer takes the narrower kv width, never Q's.
    void importedKeyOfAGroupedLayer() {
        const Scene scene = layer("llama-gqa-layer0");
        const MatrixD narrow = MatrixD::Constant(scene.dModel(), scene.dKeyValue(), 0.5);
        const Scene imported = ae::ui::withWeight(scene, WeightMatrix::Key, narrow);
        QVERIFY(imported.projections.key == narrow);
        ae::AttentionEngine<double> engine(imported);
        engine.compute();
        const MatrixD wide = MatrixD::Constant(scene.dModel(), scene.dProj(), 0.5);
        QVERIFY_THROWS_EXCEPTION(ae::io::MatrixFileError,
                                 ae::ui::withWeight(scene, WeightMatrix::Value, wide));
    }

    // The walkthrough's W_K and W_V maps of the last head of a grouped layer: the columns of the
    // kv head it reads, never past the narrower matrices.
    void walkthroughOfAGroupedLayer() {
        const Scene scene = layer("llama-gqa-layer0");
        document_->resetScene(scene);
        checkResults("opened");
        ae::plot::HeatmapGrid grid;
        ae::ui::DocumentMaps gridFollowsDocument(document_.get(), &grid);
        ae::ui::WalkthroughPanel walk(document_.get(), &grid);
        walk.show();
        grid.setHead(3);
        const int dh = scene.dHead();
        for (int s = 0; s < ae::ui::kWalkStepCount; ++s) {
            walk.setStep(s);
            QCoreApplication::processEvents();
            const auto step = static_cast<ae::ui::WalkStep>(s);
            const ae::MatrixD* weight = step == ae::ui::WalkStep::Key     ? &scene.projections.key
                                        : step == ae::ui::WalkStep::Value ? &scene.projections.value
                                                                          : nullptr;
            if (!weight) continue;
            const ae::MatrixD expected = weight->middleCols(scene.keyValueHeadOf(3) * dh, dh);
            QVERIFY(aetest::bitIdentical(walk.matrixMap()->matrix(),
                                         ae::plot::EngineF::Matrix(expected.cast<float>())));
        }
    }
};

QTEST_MAIN(TestSceneV2Window)
#include "test_scene_v2_window.moc"
