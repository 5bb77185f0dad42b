// What-ifs flow forward (issue 16): one layer of a golden model recomputed by the one-layer engine
// on its scene (core/model/model_layer_scene.h), then model::resumeAfterAttention from that layer,
// reproduces the plain run's later layers and logits; an edited residual input changes the
// layers after it and none before.
#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>
#include <algorithm>

#include "core/attention_engine.h"
#include "core/model/model_layer_scene.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

// The engine and the model pass compute the same operations in double; the engine's products
// may group sums differently, so they agree to rounding, not bit for bit.
constexpr double kTolerance = 1e-10;

// Layer l's attention sub-block as the explorer computes it: the engine on `scene`, its q, k, v,
// scores and weights stored in run.layers[l] as the window would, and its output returned.
MatrixR engineLayer(const Scene& scene, model::ModelRun<double>& run, int l) {
    AttentionEngine<double> engine(scene);
    engine.compute();
    model::LayerRecord<double>& record = run.layers[static_cast<std::size_t>(l)];
    record.query = engine.query();
    record.key = engine.key();
    record.value = engine.value();
    for (int h = 0; h < engine.heads(); ++h) {
        record.scores[static_cast<std::size_t>(h)] = engine.scores(h);
        record.weights[static_cast<std::size_t>(h)] = engine.weights(h);
    }
    return engine.output();
}

}  // namespace

class TestModelResume : public QObject {
    Q_OBJECT
private slots:
    void resumingReproducesThePlainRun_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kGoldenModels)
            QTest::newRow(qPrintable(name)) << name;
    }

    // From every layer: the engine's layer output, resumed, gives every later layer's records
    // and the logits (or last hidden state) of the plain run.
    void resumingReproducesThePlainRun() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        QVERIFY(!input.ids.empty());
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        for (int l = 0; l < m.config.layers; ++l) {
            model::ModelRun<double> run = plain;
            const Scene scene = model::layerScene(m, plain, l, input.labels);
            const MatrixR attentionOut = engineLayer(scene, run, l);
            // Scrambles what resume must recompute, so a layer it skipped would show.
            for (int later = l + 1; later < m.config.layers; ++later)
                run.layers[static_cast<std::size_t>(later)].hiddenIn.setZero();
            run.logits.setZero();
            run.lastHidden.setZero();
            model::resumeAfterAttention<double>(m, run, l, scene.embeddings, attentionOut,
                                                input.options);
            for (int before = 0; before < l; ++before) {
                QVERIFY2(bitIdentical(run.layers[static_cast<std::size_t>(before)],
                                      plain.layers[static_cast<std::size_t>(before)]),
                         qPrintable(QStringLiteral("layer %1 changed").arg(before)));
            }
            for (int later = l; later < m.config.layers; ++later) {
                const double d = layerDifference(run, plain, later);
                QVERIFY2(d <= kTolerance, qPrintable(QStringLiteral("from layer %1: layer %2 off "
                                                                    "by %3")
                                                         .arg(l)
                                                         .arg(later)
                                                         .arg(d)));
            }
            const double d = finalDifference(run, plain);
            QVERIFY2(d <= kTolerance,
                     qPrintable(QStringLiteral("from layer %1: output off by %2").arg(l).arg(d)));
        }
    }

    void anEditedResidualChangesOnlyTheLaterLayers_data() { resumingReproducesThePlainRun_data(); }

    // One embedding value of layer l's scene edited: layer l's input is the edited one, every
    // later layer's input and the output move, and the layers before stay bit-identical.
    void anEditedResidualChangesOnlyTheLaterLayers() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        for (int l = 0; l < m.config.layers; ++l) {
            model::ModelRun<double> run = plain;
            Scene scene = model::layerScene(m, plain, l, input.labels);
            scene.embeddings(0, 1) += 0.75;
            const MatrixR attentionOut = engineLayer(scene, run, l);
            model::resumeAfterAttention<double>(m, run, l, scene.embeddings, attentionOut,
                                                input.options);
            for (int before = 0; before < l; ++before) {
                QVERIFY(bitIdentical(run.layers[static_cast<std::size_t>(before)],
                                     plain.layers[static_cast<std::size_t>(before)]));
            }
            QVERIFY(run.layers[static_cast<std::size_t>(l)].hiddenIn == scene.embeddings);
            for (int later = l + 1; later < m.config.layers; ++later) {
                const double moved =
                    worstRelative(run.layers[static_cast<std::size_t>(later)].hiddenIn,
                                  plain.layers[static_cast<std::size_t>(later)].hiddenIn);
                QVERIFY2(moved > 1e-6,
                         qPrintable(QStringLiteral("edit in layer %1: layer %2 moved only %3")
                                        .arg(l)
                                        .arg(later)
                                        .arg(moved)));
            }
            QVERIFY(finalDifference(run, plain) > 1e-6);
        }
    }

    // In float, as the window computes: the float engine's layer output resumed in a float run
    // gives the float run's output to float rounding (both sum in different orders).
    void resumingInFloat_data() { resumingReproducesThePlainRun_data(); }
    void resumingInFloat() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        const auto plainDouble = model::runModel<double>(m, input.ids, input.options);
        const auto plain = model::runModel<float>(m, input.ids, input.options);
        for (int l = 0; l < m.config.layers; ++l) {
            const Scene scene = model::layerScene(m, plainDouble, l, input.labels);
            AttentionEngine<float> engine(scene);
            engine.compute();
            model::ModelRun<float> run = plain;
            run.logits.setZero();
            run.lastHidden.setZero();
            const model::Matrix<float> residual =
                plain.layers[static_cast<std::size_t>(l)].hiddenIn;
            model::resumeAfterAttention<float>(m, run, l, residual, engine.output(), input.options);
            const model::Matrix<float>& got = m.config.isDecoder() ? run.logits : run.lastHidden;
            const model::Matrix<float>& want =
                m.config.isDecoder() ? plain.logits : plain.lastHidden;
            const double worst = worstRelative(got.cast<double>(), want.cast<double>());
            // About a thousand float ulps through the remaining layers, as test_golden allows.
            QVERIFY2(worst <= 1e-4,
                     qPrintable(QStringLiteral("from layer %1: %2").arg(l).arg(worst)));
        }
    }

    void wrongShapesAndLayersAreRefused() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const model::Model& m = folder.model();
        auto run = model::runModel<double>(m, {1, 2, 3}, {});
        const MatrixR residual = run.layers[0].hiddenIn;
        const auto refusal = [&](int layer, const MatrixR& in, const MatrixR& out) -> QString {
            try {
                model::resumeAfterAttention<double>(m, run, layer, in, out);
            } catch (const model::ModelError& error) {
                return QString::fromUtf8(error.what());
            }
            return {};
        };
        const QString d = QString::number(m.config.hidden);
        QCOMPARE(refusal(m.config.layers, residual, residual),
                 QStringLiteral("resume: layer %1 is outside 0 to %2")
                     .arg(m.config.layers)
                     .arg(m.config.layers - 1));
        QCOMPARE(refusal(0, residual.topRows(2), residual),
                 QStringLiteral("resume: the residual input is 2 x %1, expected 3 x %1").arg(d));
        QCOMPARE(refusal(0, residual, residual.leftCols(1)),
                 QStringLiteral("resume: the attention output is 3 x 1, expected 3 x %1").arg(d));
    }
};

QTEST_GUILESS_MAIN(TestModelResume)
#include "test_model_resume.moc"
