// Switching heads off (issue 16, `run --ablate`): a head's context replaced by zeros or by its
// mean over positions before the output projection. In the whole-model pass an ablation in layer
// l changes exactly the layers after it and the output; it equals the layer's output computed by
// hand from the records with that head's block replaced; and the one-layer engine on the layer's
// scene with the same heads ablated, resumed (model::resumeAfterAttention), gives the same run.
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

// Two double computations of the same numbers in different summation orders.
constexpr double kTolerance = 1e-10;

model::RunOptions withAblations(model::RunOptions options,
                                const std::vector<model::HeadAblation>& heads, bool byMean) {
    options.ablations = heads;
    options.ablationMode = byMean ? model::AblationMode::Mean : model::AblationMode::Zero;
    return options;
}

QString refusal(const model::Model& m, const std::vector<model::HeadAblation>& heads) {
    model::RunOptions options;
    options.ablations = heads;
    try {
        model::runModel<double>(m, {1, 2, 3}, options);
    } catch (const model::ModelError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(accepted)");
}

}  // namespace

class TestModelAblation : public QObject {
    Q_OBJECT
private slots:
    void goldenModels_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kGoldenModels)
            QTest::newRow(qPrintable(name)) << name;
    }

    // ---- the whole-model pass

    void anAblationChangesExactlyTheLayersAfterIt_data() { goldenModels_data(); }
    void anAblationChangesExactlyTheLayersAfterIt() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        QVERIFY(!input.ids.empty());
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        for (int l = 0; l < m.config.layers; ++l) {
            for (const bool byMean : {false, true}) {
                const int head = m.config.heads - 1;
                const auto ablated = model::runModel<double>(
                    m, input.ids, withAblations(input.options, {{l, head}}, byMean));
                const QString what = QStringLiteral("%1 ablation of %2.%3")
                                         .arg(byMean ? "mean" : "zero")
                                         .arg(l)
                                         .arg(head);
                for (int before = 0; before <= l; ++before) {
                    QVERIFY2(bitIdentical(ablated.layers[static_cast<std::size_t>(before)],
                                          plain.layers[static_cast<std::size_t>(before)]),
                             qPrintable(what + QStringLiteral(": layer %1 moved").arg(before)));
                }
                for (int later = l + 1; later < m.config.layers; ++later) {
                    const auto& a = ablated.layers[static_cast<std::size_t>(later)];
                    const auto& p = plain.layers[static_cast<std::size_t>(later)];
                    QVERIFY2(worstRelative(a.hiddenIn, p.hiddenIn) > 1e-6,
                             qPrintable(what + QStringLiteral(": layer %1 kept").arg(later)));
                    QVERIFY2(
                        worstRelative(a.weights.front(), p.weights.front()) > 1e-9,
                        qPrintable(what + QStringLiteral(": weights of layer %1 kept").arg(later)));
                }
                QVERIFY2(finalDifference(ablated, plain) > 1e-6, qPrintable(what));
            }
        }
    }

    void zeroAndMeanDiffer() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const GoldenInput input = goldenInput("gpt2-tiny");
        const auto zero = model::runModel<double>(folder.model(), input.ids,
                                                  withAblations(input.options, {{0, 1}}, false));
        const auto mean = model::runModel<double>(folder.model(), input.ids,
                                                  withAblations(input.options, {{0, 1}}, true));
        QVERIFY(worstRelative(zero.layers[1].hiddenIn, mean.layers[1].hiddenIn) > 1e-6);
        QVERIFY(finalDifference(zero, mean) > 1e-6);
    }

    // Layer l's output computed by hand from the plain run's records: each head's context
    // weights·v, the ablated head's block replaced (zeros, or every row the mean row), times
    // W_O plus its bias. Resumed from there it must give the ablated run.
    void anAblationIsTheHandReplacedContext_data() { goldenModels_data(); }
    void anAblationIsTheHandReplacedContext() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const model::Config& c = m.config;
        const GoldenInput input = goldenInput(name);
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        const int hd = c.headDim;
        for (int l = 0; l < c.layers; ++l) {
            const Scene scene = model::layerScene(m, plain, l, input.labels);
            MatrixR context(static_cast<Eigen::Index>(input.ids.size()), c.heads * hd);
            for (int h = 0; h < c.heads; ++h)
                context.middleCols(h * hd, hd) =
                    plain.layers[static_cast<std::size_t>(l)].weights[static_cast<std::size_t>(h)] *
                    plain.v(l, h);
            for (const bool byMean : {false, true}) {
                const int head = l % c.heads;
                MatrixR replaced = context;
                if (byMean) {
                    const Eigen::RowVectorXd meanRow =
                        context.middleCols(head * hd, hd).colwise().sum() /
                        static_cast<double>(context.rows());
                    for (Eigen::Index i = 0; i < replaced.rows(); ++i)
                        replaced.block(i, head * hd, 1, hd) = meanRow;
                } else {
                    replaced.middleCols(head * hd, hd).setZero();
                }
                MatrixR attentionOut = replaced * scene.projections.output;
                attentionOut.rowwise() += scene.projections.outputBias.transpose();
                model::ModelRun<double> byHand = plain;
                model::resumeAfterAttention<double>(m, byHand, l, scene.embeddings, attentionOut,
                                                    input.options);
                const auto ablated = model::runModel<double>(
                    m, input.ids, withAblations(input.options, {{l, head}}, byMean));
                for (int later = l + 1; later < c.layers; ++later)
                    QVERIFY(layerDifference(byHand, ablated, later) <= kTolerance);
                const double d = finalDifference(byHand, ablated);
                QVERIFY2(d <= kTolerance, qPrintable(QStringLiteral("layer %1 %2: off by %3")
                                                         .arg(l)
                                                         .arg(byMean ? "mean" : "zero")
                                                         .arg(d)));
            }
        }
    }

    // Several heads in several layers at once: each layer's own heads, the others untouched.
    void ablationsInSeveralLayersCompose() {
        const io::ModelFolder folder(goldenModelDir("llama-tiny-gqa"));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput("llama-tiny-gqa");
        QVERIFY(m.config.layers >= 2);
        const auto first =
            model::runModel<double>(m, input.ids, withAblations(input.options, {{0, 0}}, false));
        const auto both = model::runModel<double>(
            m, input.ids, withAblations(input.options, {{1, 1}, {0, 0}}, false));
        QVERIFY(bitIdentical(both.layers[1], first.layers[1]));
        QVERIFY(finalDifference(both, first) > 1e-6);
    }

    // ---- the one-layer engine on a layer's scene

    // The layer's scene with heads switched off, computed by the engine and resumed, is the
    // whole-model run with the same heads switched off in that layer.
    void engineAndResumeEqualTheAblatedRun_data() { goldenModels_data(); }
    void engineAndResumeEqualTheAblatedRun() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const model::Config& c = m.config;
        const GoldenInput input = goldenInput(name);
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        for (int l = 0; l < c.layers; ++l) {
            for (const bool byMean : {false, true}) {
                Scene scene = model::layerScene(m, plain, l, input.labels);
                scene.ablation.heads = {c.heads - 1, 0};
                scene.ablation.byMean = byMean;
                AttentionEngine<double> engine(scene);
                engine.compute();
                model::ModelRun<double> resumed = plain;
                model::resumeAfterAttention<double>(m, resumed, l, scene.embeddings,
                                                    engine.output(), input.options);
                const auto ablated = model::runModel<double>(
                    m, input.ids, withAblations(input.options, {{l, c.heads - 1}, {l, 0}}, byMean));
                for (int later = l + 1; later < c.layers; ++later)
                    QVERIFY(layerDifference(resumed, ablated, later) <= kTolerance);
                const double d = finalDifference(resumed, ablated);
                QVERIFY2(d <= kTolerance, qPrintable(QStringLiteral("layer %1 %2: off by %3")
                                                         .arg(l)
                                                         .arg(byMean ? "mean" : "zero")
                                                         .arg(d)));
                // And it is not the plain run.
                QVERIFY(finalDifference(resumed, plain) > 1e-6);
            }
        }
    }

    // Switching heads off or on redoes the contexts and the output, not the scores or the
    // softmax, and gives what a fresh engine on the edited scene gives.
    void setAblationRedoesOnlyTheContexts() {
        const io::ModelFolder folder(goldenModelDir("qwen3-tiny"));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput("qwen3-tiny");
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        const Scene scene = model::layerScene(m, plain, 0, input.labels);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const MatrixR plainOutput = engine.output();
        const EngineCounters before = engine.counters();
        for (const bool byMean : {false, true}) {
            Scene::Ablation ablation;
            ablation.heads = {1};
            ablation.byMean = byMean;
            engine.setAblation(ablation);
            QCOMPARE(engine.pendingWork(), WorkFrom::Context);
            engine.compute();
            Scene edited = scene;
            edited.ablation = ablation;
            AttentionEngine<double> fresh(edited);
            fresh.compute();
            QVERIFY(engine.concat() == fresh.concat());
            QVERIFY(engine.output() == fresh.output());
            QVERIFY(engine.scene().ablation == ablation);
            const MatrixR context = engine.stageMatrix(Stage::Context, 1);
            if (byMean) {
                QVERIFY(context.rows() > 1);
                for (Eigen::Index i = 1; i < context.rows(); ++i)
                    QVERIFY(context.row(i) == context.row(0));
                QVERIFY(!context.isZero(0));
            } else {
                QVERIFY(context.isZero(0));
            }
        }
        engine.setAblation({});
        engine.compute();
        QVERIFY(engine.output() == plainOutput);
        QCOMPARE(engine.counters().scorePasses, before.scorePasses);
        QCOMPARE(engine.counters().softmaxPasses, before.softmaxPasses);
        QCOMPARE(engine.counters().fullProjections, before.fullProjections);
        // The same ablation again is no change at all.
        engine.setAblation({});
        QCOMPARE(engine.pendingWork(), WorkFrom::Nothing);
    }

    // Without an output projection the switched-off head's context is the layer's output.
    void withoutOutputTheContextIsReplaced() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const GoldenInput input = goldenInput("gpt2-tiny");
        const auto plain = model::runModel<double>(folder.model(), input.ids, input.options);
        Scene scene = model::layerScene(folder.model(), plain, 0, input.labels);
        scene.projections.hasOutput = false;
        scene.projections.output = MatrixD();
        scene.projections.outputBias = VectorD();
        scene.ablation.heads = {0};
        AttentionEngine<double> engine(scene);
        engine.compute();
        QVERIFY(!engine.hasOutput());
        QVERIFY(MatrixR(engine.stageMatrix(Stage::Context, 0)).isZero(0));
        QVERIFY(!MatrixR(engine.stageMatrix(Stage::Context, 1)).isZero(0));
    }

    // The head count stays while a head is off: heads would mean other columns after it.
    void headCountIsKeptWhileAHeadIsOff() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const GoldenInput input = goldenInput("gpt2-tiny");
        const auto plain = model::runModel<double>(folder.model(), input.ids, input.options);
        Scene scene = model::layerScene(folder.model(), plain, 0, input.labels);
        scene.ablation.heads = {1};
        AttentionEngine<double> engine(scene);
        try {
            engine.setHeads(1);
            QFAIL("changed the head count with a head switched off");
        } catch (const SceneError& error) {
            QCOMPARE(QString::fromStdString(error.path()), QStringLiteral("ablation"));
        }
        QVERIFY(!headCountAllowed(scene, 1));
        scene.ablation.heads.clear();
        QVERIFY(headCountAllowed(scene, 1));
    }

    void badAblationsAreRefused() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const model::Model& m = folder.model();
        const int L = m.config.layers, H = m.config.heads;
        const QString range = QStringLiteral(
                                  ": layer must be in 0 to %1 and head in 0 to %2 (the "
                                  "model has %3 layers of %4 heads)")
                                  .arg(L - 1)
                                  .arg(H - 1)
                                  .arg(L)
                                  .arg(H);
        QCOMPARE(refusal(m, {{L, 0}}), QStringLiteral("ablation %1.0").arg(L) + range);
        QCOMPARE(refusal(m, {{0, H}}), QStringLiteral("ablation 0.%1").arg(H) + range);
        QCOMPARE(refusal(m, {{-1, 0}}), QStringLiteral("ablation -1.0") + range);
        QCOMPARE(refusal(m, {{0, -2}}), QStringLiteral("ablation 0.-2") + range);
        QCOMPARE(refusal(m, {{0, 1}, {1, 0}, {0, 1}}),
                 QStringLiteral("ablation 0.1: listed twice"));
        QCOMPARE(refusal(m, {{0, 1}, {1, 0}}), QStringLiteral("(accepted)"));
    }
};

QTEST_GUILESS_MAIN(TestModelAblation)
#include "test_model_ablation.moc"
