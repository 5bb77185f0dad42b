// Planned memory: a run that keeps no maps (RunOptions::keptMaps) computes the same logits and
// hidden states, and recomputeLayerMaps gives back every layer's scores and weights bit for bit as
// a run keeping every map has them, on every golden model and each of its expected inputs
// (padding included), in float and in double.
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "core/model/model.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

template <typename Scalar>
void sameBitForBit(const QString& name, const QString& expectedFile) {
    const io::ModelFolder folder(goldenModelDir(name));
    const model::Model& m = folder.model();
    const GoldenInput input = goldenInput(name, expectedFile);
    const std::vector<long long>& ids = input.ids;
    model::RunOptions every;
    every.attentionMask = input.options.attentionMask;
    const model::ModelRun<Scalar> full = model::runModel<Scalar>(m, ids, every);

    model::RunOptions none = every;
    none.keptMaps = model::RunOptions::KeptMaps::Chosen;
    model::ModelRun<Scalar> planned = model::runModel<Scalar>(m, ids, none);
    QCOMPARE(planned.layers.size(), full.layers.size());
    QVERIFY(planned.logits == full.logits);
    QVERIFY(planned.lastHidden == full.lastHidden);
    for (std::size_t l = 0; l < full.layers.size(); ++l) {
        QVERIFY(!planned.layers[l].hasMaps());
        QVERIFY(planned.layers[l].hiddenIn == full.layers[l].hiddenIn);
        model::recomputeLayerMaps(m, planned, static_cast<int>(l));
        QCOMPARE(planned.layers[l].weights.size(), full.layers[l].weights.size());
        for (std::size_t h = 0; h < full.layers[l].weights.size(); ++h) {
            QVERIFY2(planned.layers[l].scores[h] == full.layers[l].scores[h],
                     qPrintable(QStringLiteral("layer %1 head %2 scores").arg(l).arg(h)));
            QVERIFY2(planned.layers[l].weights[h] == full.layers[l].weights[h],
                     qPrintable(QStringLiteral("layer %1 head %2 weights").arg(l).arg(h)));
        }
    }
}

}  // namespace

class TestRecomputedMaps : public QObject {
    Q_OBJECT

private slots:
    void recomputedMapsAreTheFullRunsBitForBit_data() { addGoldenInputRows(); }
    void recomputedMapsAreTheFullRunsBitForBit() {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        sameBitForBit<float>(name, expected);
        sameBitForBit<double>(name, expected);
    }

    // Only the chosen layers keep their maps; the memory plan counts only theirs.
    void chosenLayersKeepTheirMaps() {
        const io::ModelFolder folder(goldenModelDir(QStringLiteral("gpt2-tiny")));
        const model::Model& m = folder.model();
        const std::vector<long long> ids{7, 41, 3, 59, 22};
        model::RunOptions options;
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
        options.mapLayers = {1};
        const model::ModelRun<float> run = model::runModel<float>(m, ids, options);
        QVERIFY(!run.layers[0].hasMaps());
        QVERIFY(run.layers[1].hasMaps());
        QCOMPARE(run.layers[1].weights.size(), std::size_t(m.config.heads));
        const double all = model::runMemory(m, 5, 4).kept;
        const double one = model::runMemory(m, 5, 4, 1).kept;
        const double perLayerMaps = 2.0 * m.config.heads * 5 * 5 * 4;
        QCOMPARE(all - one, (m.config.layers - 1) * perLayerMaps);
    }

    // afterLayer sees every layer finish, in order, and stops the pass between two.
    void passReportsEachLayerAndStopsWhenAsked() {
        const io::ModelFolder folder(goldenModelDir(QStringLiteral("gpt2-tiny")));
        const int layers = folder.model().config.layers;
        std::vector<int> seen;
        model::RunOptions options;
        options.afterLayer = [&](int done) {
            seen.push_back(done);
            return true;
        };
        model::runModel<float>(folder.model(), {1, 2, 3}, options);
        std::vector<int> expected(static_cast<std::size_t>(layers));
        for (int l = 0; l < layers; ++l)
            expected[static_cast<std::size_t>(l)] = l + 1;
        QCOMPARE(seen, expected);
        seen.clear();
        options.afterLayer = [&](int done) {
            seen.push_back(done);
            return done < 1;
        };
        QVERIFY_THROWS_EXCEPTION(model::RunCancelled,
                                 model::runModel<float>(folder.model(), {1, 2, 3}, options));
        QCOMPARE(seen, std::vector<int>{1});
    }

    void refusals() {
        const io::ModelFolder folder(goldenModelDir(QStringLiteral("gpt2-tiny")));
        model::RunOptions options;
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
        model::ModelRun<float> run = model::runModel<float>(folder.model(), {1, 2, 3}, options);
        try {
            model::recomputeLayerMaps(folder.model(), run, 9);
            QFAIL("a layer outside the run was recomputed");
        } catch (const model::ModelError& e) {
            QCOMPARE(QString::fromUtf8(e.what()),
                     QStringLiteral("layer 9 is outside the run's %1 layers")
                         .arg(folder.model().config.layers));
        }
    }

    // A what-if's edited layer holds the caller's maps, which no recomputation may replace; its
    // other layers were made by the model, and are recomputed as any run's.
    void whatIfLayers() {
        const io::ModelFolder folder(goldenModelDir(QStringLiteral("gpt2-tiny")));
        const std::vector<long long> ids{1, 2, 3, 4};
        const model::ModelRun<float> full = model::runModel<float>(folder.model(), ids);
        model::RunOptions options;
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
        model::ModelRun<float> run = model::runModel<float>(folder.model(), ids, options);
        run.whatIf = true;
        model::Matrix<float> edited = full.layers[1].weights[0];
        edited.setConstant(0.25f);
        run.layers[1].scores = full.layers[1].scores;
        run.layers[1].weights = full.layers[1].weights;
        run.layers[1].weights[0] = edited;
        const model::LayerMaps<float> kept = model::recomputedLayerMaps(folder.model(), run, 1);
        QVERIFY(kept.weights[0] == edited);
        const model::LayerMaps<float> again = model::recomputedLayerMaps(folder.model(), run, 0);
        QCOMPARE(again.weights.size(), full.layers[0].weights.size());
        for (std::size_t h = 0; h < again.weights.size(); ++h)
            QVERIFY(again.weights[h] == full.layers[0].weights[h]);
    }
};

QTEST_APPLESS_MAIN(TestRecomputedMaps)
#include "test_recomputed_maps.moc"
