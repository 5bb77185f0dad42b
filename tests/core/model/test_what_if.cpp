// A what-if flowing forward (core/model/what_if.h): a model's layer recomputed by the one-layer
// engine on its (edited) scene, then every later layer run again. Held against what the model
// session computed before this was a function of its own (the records copied from the engine by
// hand and model::resumeAfterAttention called directly), and against the whole-model pass with
// the same heads switched off.
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "core/attention_engine.h"
#include "core/model/model_layer_scene.h"
#include "core/model/what_if.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

// The same float operations in the same order: equal up to nothing, but a tolerance far below
// what any edit moves keeps the test about the numbers, not the instruction scheduling.
constexpr double kSameFloatWork = 1e-6;
// Two double computations of the same numbers in different summation orders.
constexpr double kDoubleRounding = 1e-10;

template <typename A, typename B>
double largestDifference(const A& a, const B& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    if (a.size() == 0) return 0.0;
    return (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff();
}

// The largest difference between any two matrices two runs keep (infinity when a shape or the
// kv grouping differs).
double largestDifference(const model::ModelRun<float>& a, const model::ModelRun<float>& b) {
    if (a.tokens != b.tokens || a.layers.size() != b.layers.size()) return INFINITY;
    double worst = std::max({largestDifference(a.logits, b.logits),
                             largestDifference(a.finalHidden, b.finalHidden),
                             largestDifference(a.lastHidden, b.lastHidden)});
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        const auto &x = a.layers[l], &y = b.layers[l];
        if (x.keyValueHeads != y.keyValueHeads || x.scores.size() != y.scores.size())
            return INFINITY;
        worst = std::max({worst, largestDifference(x.hiddenIn, y.hiddenIn),
                          largestDifference(x.query, y.query), largestDifference(x.key, y.key),
                          largestDifference(x.value, y.value)});
        for (std::size_t h = 0; h < x.scores.size(); ++h)
            worst = std::max({worst, largestDifference(x.scores[h], y.scores[h]),
                              largestDifference(x.weights[h], y.weights[h])});
    }
    return worst;
}

// What the session did between "layer `l`'s scene was edited" and "a new run is ready", before
// the what-if had a function of its own: the engine's records copied into a run holding the base
// run's earlier layers, then resumeAfterAttention.
model::ModelRun<float> resumedByHand(const model::Model& m, const model::ModelRun<float>& base,
                                     const Scene& scene, const AttentionEngine<float>& engine,
                                     int l, const model::RunOptions& options) {
    model::ModelRun<float> run;
    run.config = base.config;
    run.tokens = base.tokens;
    run.attentionMask = base.attentionMask;
    run.options = base.options;
    run.layers.resize(base.layers.size());
    std::copy(base.layers.begin(), base.layers.begin() + l, run.layers.begin());
    model::LayerRecord<float>& record = run.layers[static_cast<std::size_t>(l)];
    record.hiddenIn = scene.embeddings.cast<float>();
    record.query = engine.query();
    record.key = engine.key();
    record.value = engine.value();
    if (scene.keyValueHeads() != base.config.kvHeads) record.keyValueHeads = scene.keyValueHeads();
    for (int h = 0; h < scene.heads; ++h) {
        record.scores.push_back(engine.scores(h));
        record.weights.push_back(engine.weights(h));
    }
    const model::Matrix<float> residualIn = record.hiddenIn;
    model::resumeAfterAttention<float>(m, run, l, residualIn, engine.output(), options);
    return run;
}

}  // namespace

class TestWhatIf : public QObject {
    Q_OBJECT
private slots:
    void goldenModels_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kGoldenModels)
            QTest::newRow(qPrintable(name)) << name;
    }

    // A sharper softmax in each layer in turn (the divisor halved), in float as the window
    // computes: the run resumeWhatIf gives is the run the session made by hand, its layers
    // before the edited one are the base run's bit for bit, and it is not the base run.
    void resumesAsTheSessionDid_data() { goldenModels_data(); }
    void resumesAsTheSessionDid() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        QVERIFY(!input.ids.empty());
        model::RunOptions options = input.options;
        options.logitsForEveryPosition = false;  // as the window runs a model
        const auto baseInDouble = model::runModel<double>(m, input.ids, options);
        const auto base = model::runModel<float>(m, input.ids, options);
        for (int l = 0; l < m.config.layers; ++l) {
            Scene scene = model::layerScene(m, baseInDouble, l, input.labels);
            QCOMPARE(model::whatIfShapeProblem(scene, m.config, int(input.ids.size())),
                     std::string());
            scene.scale.kind = ScaleKind::Divisor;
            scene.scale.divisor *= 0.5;
            AttentionEngine<float> engine(scene);
            engine.compute();
            const model::ModelRun<float> byHand = resumedByHand(m, base, scene, engine, l, options);
            const model::ModelRun<float> got = model::resumeWhatIf<float>(
                m, base, model::editedLayer(scene, engine, l, m.config.kvHeads), options);
            QVERIFY(got.whatIf);
            const double d = largestDifference(got, byHand);
            QVERIFY2(d <= kSameFloatWork,
                     qPrintable(QStringLiteral("edit in layer %1: off by %2").arg(l).arg(d)));
            for (int before = 0; before < l; ++before) {
                const auto& x = got.layers[static_cast<std::size_t>(before)];
                const auto& y = base.layers[static_cast<std::size_t>(before)];
                QVERIFY(x.hiddenIn == y.hiddenIn && x.query == y.query && x.value == y.value);
            }
            QVERIFY(got.layers[static_cast<std::size_t>(l)].hiddenIn ==
                    scene.embeddings.cast<float>());
            const double moved = m.config.isDecoder()
                                     ? largestDifference(got.logits, base.logits)
                                     : largestDifference(got.lastHidden, base.lastHidden);
            QVERIFY2(
                moved > 1e-5,
                qPrintable(QStringLiteral("edit in layer %1 moved only %2").arg(l).arg(moved)));
        }
    }

    // Heads switched off by zeros in the layer's scene, flowed forward, are the whole-model run
    // with the same heads switched off (double: to rounding).
    void switchedOffHeadsAreTheModelsAblation_data() { goldenModels_data(); }
    void switchedOffHeadsAreTheModelsAblation() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const model::Config& c = m.config;
        const GoldenInput input = goldenInput(name);
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        for (int l = 0; l < c.layers; ++l) {
            Scene scene = model::layerScene(m, plain, l, input.labels);
            scene.ablation.heads = {c.heads - 1};
            scene.ablation.byMean = false;
            AttentionEngine<double> engine(scene);
            engine.compute();
            const model::ModelRun<double> got = model::resumeWhatIf<double>(
                m, plain, model::editedLayer(scene, engine, l, c.kvHeads), input.options);
            model::RunOptions off = input.options;
            off.ablations = {{l, c.heads - 1}};
            const auto ablated = model::runModel<double>(m, input.ids, off);
            for (int later = l; later < c.layers; ++later) {
                const double d = layerDifference(got, ablated, later);
                QVERIFY2(d <= kDoubleRounding,
                         qPrintable(QStringLiteral("head %1.%2 off: layer %3 off by %4")
                                        .arg(l)
                                        .arg(c.heads - 1)
                                        .arg(later)
                                        .arg(d)));
            }
            const double d = finalDifference(got, ablated);
            QVERIFY2(d <= kDoubleRounding,
                     qPrintable(QStringLiteral("head %1 off: output off by %2").arg(l).arg(d)));
            QVERIFY(finalDifference(got, plain) > 1e-6);
        }
    }

    // A layer that no longer fits the model is named, so the session can say why the what-if
    // stays in the layer; a layer outside the run is refused as resumeAfterAttention refuses it.
    void aLayerThatNoLongerFitsIsNamed() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const model::Model& m = folder.model();
        const model::Config& c = m.config;
        const auto run = model::runModel<double>(m, {1, 2, 3}, {});
        const Scene pristine = model::layerScene(m, run, 0, {"a", "b", "c"});
        QCOMPARE(model::whatIfShapeProblem(pristine, c, 3), std::string());
        QCOMPARE(model::whatIfShapeProblem(pristine, c, 4),
                 std::string("the layer has 3 tokens, the text 4"));
        Scene source = pristine;
        source.hasSource = true;
        QCOMPARE(model::whatIfShapeProblem(source, c, 3),
                 std::string("the layer has a source (cross-attention)"));
        Scene fewerHeads = pristine;
        fewerHeads.heads = c.heads / 2;
        QCOMPARE(model::whatIfShapeProblem(fewerHeads, c, 3),
                 "the layer has " + std::to_string(c.heads / 2) + " heads of " +
                     std::to_string(2 * c.headDim) + ", the model " + std::to_string(c.heads) +
                     " of " + std::to_string(c.headDim));
        Scene noOutput = pristine;
        noOutput.projections.hasOutput = false;
        QCOMPARE(model::whatIfShapeProblem(noOutput, c, 3),
                 std::string("the projections are no longer the model's (separate, with W_O)"));

        AttentionEngine<double> engine(pristine);
        engine.compute();
        model::EditedLayer<double> outside = model::editedLayer(pristine, engine, 0, c.kvHeads);
        outside.layer = c.layers;
        QString refusal;
        try {
            model::resumeWhatIf<double>(m, run, outside, {});
        } catch (const model::ModelError& error) {
            refusal = QString::fromUtf8(error.what());
        }
        QCOMPARE(
            refusal,
            QStringLiteral("resume: layer %1 is outside 0 to %2").arg(c.layers).arg(c.layers - 1));
    }
};

QTEST_GUILESS_MAIN(TestWhatIf)
#include "test_what_if.moc"
