// A what-if on a model's weights as a model of its own (core/model/edited_model.h): the weights
// edited in a layer's scene, written back into the family's layout, give the run the one-layer
// engine gives on that scene, flowed forward; an edit the weights cannot hold is named.
#include <QtTest>
#include <cmath>

#include "core/attention_engine.h"
#include "core/model/edited_model.h"
#include "core/model/model_layer_scene.h"
#include "core/model/what_if.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

// Two double computations of the same numbers in different summation orders.
constexpr double kDoubleRounding = 1e-10;

// A small, uneven change to every number of `m`, different for each matrix (`seed`).
template <typename M>
void nudge(M& m, double seed) {
    for (Eigen::Index i = 0; i < m.rows(); ++i)
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            m(i, j) += 0.05 * std::sin(seed + 1.7 * double(i) + 0.3 * double(j));
}

// Every weight of the layer's scene the model stores, edited (W_Q and W_K stay where the
// model's relative-position terms read them too).
Scene everyWeightEdited(const Scene& pristine, const model::Config& c) {
    Scene s = pristine;
    Projections& p = s.projections;
    const bool positionTermsReadQk =
        c.architecture().scoreTerms == model::ScoreTermKind::Disentangled && c.disentangled.any();
    if (!positionTermsReadQk) {
        nudge(p.query, 1);
        nudge(p.key, 2);
        nudge(p.queryBias, 4);
        nudge(p.keyBias, 5);
    }
    nudge(p.value, 3);
    nudge(p.valueBias, 6);
    nudge(p.output, 7);
    nudge(p.outputBias, 8);
    if (s.norm.enabled) {
        nudge(s.norm.weight, 9);
        if (c.architecture().norm == model::NormType::LayerNorm) nudge(s.norm.bias, 10);
    }
    if (s.qkNorm.enabled) {
        nudge(s.qkNorm.queryWeight, 11);
        nudge(s.qkNorm.keyWeight, 12);
    }
    return s;
}

}  // namespace

class TestEditedModel : public QObject {
    Q_OBJECT
private slots:
    void goldenModels_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kGoldenModels)
            QTest::newRow(qPrintable(name)) << name;
    }

    // Each layer's weights edited at once: the edited model's run, from that layer on, is the
    // engine's what-if on the edited scene flowed forward (double: to rounding), and it is not
    // the model's own run.
    void isTheWhatIfOfItsLayer_data() { goldenModels_data(); }
    void isTheWhatIfOfItsLayer() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const model::Config& c = m.config;
        const GoldenInput input = goldenInput(name);
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        for (int l = 0; l < c.layers; ++l) {
            const Scene pristine = model::layerScene(m, plain, l, input.labels);
            const Scene scene = everyWeightEdited(pristine, c);
            QCOMPARE(model::editOutsideWeights(scene, pristine, c), std::string());
            AttentionEngine<double> engine(scene);
            engine.compute();
            const model::ModelRun<double> whatIf = model::resumeWhatIf<double>(
                m, plain, model::editedLayer(scene, engine, l, c.kvHeads), input.options);
            const model::Model edited = model::withLayerWeights(m, l, scene, pristine);
            QVERIFY(!edited.editedTensors.empty());
            const auto run = model::runModel<double>(edited, input.ids, input.options);
            for (int before = 0; before < l; ++before)
                QVERIFY(bitIdentical(run.layers[std::size_t(before)],
                                     plain.layers[std::size_t(before)]));
            for (int later = l; later < c.layers; ++later) {
                const double d = layerDifference(run, whatIf, later);
                QVERIFY2(d <= kDoubleRounding, qPrintable(QStringLiteral("edit in layer %1: layer "
                                                                         "%2 off by %3")
                                                              .arg(l)
                                                              .arg(later)
                                                              .arg(d)));
            }
            const double d = finalDifference(run, whatIf);
            QVERIFY2(
                d <= kDoubleRounding,
                qPrintable(QStringLiteral("edit in layer %1: output off by %2").arg(l).arg(d)));
            QVERIFY(finalDifference(run, plain) > 1e-6);
        }
    }

    // A scene as made changes nothing: no tensor is replaced and the run is the model's, bit for
    // bit; one edited matrix replaces only the tensor that holds it.
    void anUneditedLayerIsTheModel_data() { goldenModels_data(); }
    void anUneditedLayerIsTheModel() {
        QFETCH(QString, name);
        const io::ModelFolder folder(goldenModelDir(name));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput(name);
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        const int l = m.config.layers - 1;
        const Scene pristine = model::layerScene(m, plain, l, input.labels);
        const model::Model same = model::withLayerWeights(m, l, pristine, pristine);
        QVERIFY(same.editedTensors.empty());
        QVERIFY(model::editedWeightNames(pristine, pristine).empty());
        const auto run = model::runModel<double>(same, input.ids, input.options);
        QVERIFY(finalDifference(run, plain) == 0.0);

        Scene valueOnly = pristine;
        nudge(valueOnly.projections.value, 3);
        QCOMPARE(model::editedWeightNames(valueOnly, pristine), std::vector<std::string>{"W_V"});
        const model::Model edited = model::withLayerWeights(m, l, valueOnly, pristine);
        QCOMPARE(edited.editedTensors.size(), std::size_t(1));
        const model::LayerWeights &was = m.weights.layers[std::size_t(l)],
                                  &now = edited.weights.layers[std::size_t(l)];
        QVERIFY(now.output.data == was.output.data && now.norm1.data == was.norm1.data);
        const model::TensorRef& holder = was.qkv.present() ? now.qkv : now.value;
        QCOMPARE(holder.dtype, DType::F64);
        QCOMPARE(holder.name, (was.qkv.present() ? was.qkv : was.value).name);
    }

    // The window runs in float: the edited model's F64 tensors are read as float like any other.
    void runsInFloat() {
        const io::ModelFolder folder(goldenModelDir("llama-tiny-gqa"));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput("llama-tiny-gqa");
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        const Scene pristine = model::layerScene(m, plain, 0, input.labels);
        const model::Model edited =
            model::withLayerWeights(m, 0, everyWeightEdited(pristine, m.config), pristine);
        const auto inDouble = model::runModel<double>(edited, input.ids, input.options);
        const auto inFloat = model::runModel<float>(edited, input.ids, input.options);
        const double d = (inFloat.logits.cast<double>() - inDouble.logits).cwiseAbs().maxCoeff();
        QVERIFY2(d < 1e-4, qPrintable(QString::number(d)));
        QVERIFY(finalDifference(inDouble, plain) > 1e-6);
    }

    // What the weights cannot hold is named, the first found, and withLayerWeights refuses it.
    void anEditOutsideTheWeightsIsNamed() {
        const io::ModelFolder folder(goldenModelDir("llama-tiny-gqa"));
        const model::Model& m = folder.model();
        const model::Config& c = m.config;
        const GoldenInput input = goldenInput("llama-tiny-gqa");
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        const Scene pristine = model::layerScene(m, plain, 1, input.labels);
        const auto outside = [&](const std::function<void(Scene&)>& edit) {
            Scene s = pristine;
            edit(s);
            return model::editOutsideWeights(s, pristine, c);
        };
        QCOMPARE(outside([](Scene& s) { s.embeddings(0, 0) += 1; }),
                 std::string("this text's residual stream entering the layer"));
        QCOMPARE(outside([](Scene& s) { s.scale.divisor *= 2; }), std::string("the scale"));
        QCOMPARE(outside([](Scene& s) { s.softCap = 30.0; }), std::string("the soft-cap"));
        QCOMPARE(outside([](Scene& s) { s.mask.causal = false; }), std::string("the mask"));
        QCOMPARE(outside([](Scene& s) { s.norm.bias(0) = 0.5; }),
                 std::string("the norm's bias, which the model's RMSNorm does not have"));
        QCOMPARE(outside([](Scene& s) {
                     s.ablation.heads = {0};
                     s.ablation.byMean = true;
                 }),
                 std::string("heads switched off by their mean over this text"));
        QCOMPARE(outside([](Scene& s) {
                     s.ablation.heads = {0};
                     s.ablation.byMean = false;
                 }),
                 std::string());
        Scene scaled = pristine;
        scaled.scale.divisor *= 2;
        try {
            model::withLayerWeights(m, 1, scaled, pristine);
            QFAIL("an edit of the scale was written into the weights");
        } catch (const model::ModelError& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("the edit of layer 1 changes the scale, which the model's "
                                 "weights do not hold"));
        }
        // A bias the family does not store is added: Llama has no b_V.
        QVERIFY(!m.weights.layers[1].valueBias.present());
        Scene biased = pristine;
        biased.projections.valueBias.setConstant(0.25);
        const model::Model edited = model::withLayerWeights(m, 1, biased, pristine);
        QVERIFY(edited.weights.layers[1].valueBias.present());
        const auto run = model::runModel<double>(edited, input.ids, input.options);
        AttentionEngine<double> engine(biased);
        engine.compute();
        const auto whatIf = model::resumeWhatIf<double>(
            m, plain, model::editedLayer(biased, engine, 1, c.kvHeads), input.options);
        QVERIFY(finalDifference(run, whatIf) <= kDoubleRounding);
    }

    // DeBERTa's c2p and p2c read the content query and key, which the scene holds as numbers.
    void positionTermsKeepTheQueryAndKey() {
        const io::ModelFolder folder(goldenModelDir("deberta-v2-tiny"));
        const model::Model& m = folder.model();
        const GoldenInput input = goldenInput("deberta-v2-tiny");
        const auto plain = model::runModel<double>(m, input.ids, input.options);
        const Scene pristine = model::layerScene(m, plain, 0, input.labels);
        Scene s = pristine;
        s.projections.key(0, 0) += 1;
        QCOMPARE(model::editOutsideWeights(s, pristine, m.config),
                 std::string("W_Q or W_K, which this model's relative-position terms also read"));
        s = pristine;
        s.projections.value(0, 0) += 1;
        QCOMPARE(model::editOutsideWeights(s, pristine, m.config), std::string());
    }
};

QTEST_GUILESS_MAIN(TestEditedModel)
#include "test_edited_model.moc"
