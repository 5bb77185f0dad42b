// One layer of a model is a scene: every layer of every golden model, written as a scene
// (core/model/model_layer_scene.h), saved and read back as format version 2 (io/), and computed by
// the one-layer engine, reproduces that layer's q, k, v, scores and weights from the reference
// (shared/reference/model_reference.py, float64; tests/data/models/*/expected-ids-*.json).
#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QtTest>

#include "core/attention_engine.h"
#include "core/model/model_layer_scene.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

// The one-layer engine in double against the reference's float64: both compute the same
// operations in the same order from residual inputs that agree to ~1e-14.
constexpr double kTolerance = 1e-10;

}  // namespace

class TestModelLayerScene : public QObject {
    Q_OBJECT
private slots:
    void everyLayerReproducesTheReference_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expected");
        for (const QString& name : kGoldenModels) {
            const QDir dir(goldenModelDir(name));
            for (const QString& file : dir.entryList({"expected-ids-*.json"}, QDir::Files))
                QTest::newRow(qPrintable(name + "/" + file)) << name << file;
        }
    }

    void everyLayerReproducesTheReference() {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        const QString expectedFile = expected;
        const QJsonObject reference =
            readJsonFile(QDir(goldenModelDir(name)).filePath(expectedFile));
        const io::ModelFolder folder(goldenModelDir(name));
        const std::vector<long long> ids = jsonIds(reference.value("tokens").toArray());
        const model::RunOptions options = referenceOptions(reference);
        const auto run = model::runModel<double>(folder.model(), ids, options);
        std::vector<std::string> labels;
        for (long long id : ids)
            labels.push_back(std::to_string(id));

        const QJsonArray layers = reference.value("layers").toArray();
        QCOMPARE(layers.size(), folder.model().config.layers);
        const bool decoder = folder.model().config.isDecoder();
        for (int l = 0; l < layers.size(); ++l) {
            const Scene written = model::layerScene(folder.model(), run, l, labels);
            // Through the file, as `attention-explorer scene` writes it and the window opens it.
            const QByteArray json = io::sceneToJson(written);
            const Scene scene = io::parseScene(json);
            QCOMPARE(json.contains("\"version\": 2"), written.usesVersion2());
            QCOMPARE(scene.mask.causal, decoder);
            AttentionEngine<double> engine(scene);
            engine.compute();
            const QJsonArray heads = layers[l].toObject().value("heads").toArray();
            QCOMPARE(heads.size(), engine.heads());
            Difference d;
            for (int h = 0; h < heads.size(); ++h) {
                const QJsonObject head = heads[h].toObject();
                const QString p = QStringLiteral("layers[%1].heads[%2].").arg(l).arg(h);
                compareMatrix(head.value("q"), engine.stageMatrix(Stage::Query, h), p + "q", d);
                compareMatrix(head.value("k"), engine.stageMatrix(Stage::Key, h), p + "k", d);
                compareMatrix(head.value("v"), engine.stageMatrix(Stage::Value, h), p + "v", d);
                compareMatrix(head.value("scores"), engine.stageMatrix(Stage::Scores, h),
                              p + "scores", d);
                compareMatrix(head.value("weights"), engine.stageMatrix(Stage::Weights, h),
                              p + "weights", d);
            }
            qInfo("%s layer %d: worst relative error %.3g at %s", qPrintable(name), l, d.worst,
                  qPrintable(d.where));
            QVERIFY2(d.worst <= kTolerance, qPrintable(d.where));
        }
    }

    // The check can fail: a layer with the scale left at √d_k of a wrong width, or another
    // layer's input, no longer matches.
    void aWrongLayerDoesNotMatch() {
        const QJsonObject expected =
            readJsonFile(goldenModelDir("llama-tiny-gqa") + "/expected-ids-A.json");
        const io::ModelFolder folder(goldenModelDir("llama-tiny-gqa"));
        const auto run = model::runModel<double>(folder.model(),
                                                 jsonIds(expected.value("tokens").toArray()), {});
        Scene scene =
            model::layerScene(folder.model(), run, 1, {"a", "b", "c", "d", "e", "f", "g"});
        scene.embeddings = run.layers[0].hiddenIn;  // layer 1's weights on layer 0's input
        AttentionEngine<double> engine(scene);
        engine.compute();
        Difference d;
        const QJsonObject head =
            expected.value("layers").toArray()[1].toObject().value("heads").toArray()[0].toObject();
        compareMatrix(head.value("weights"), engine.stageMatrix(Stage::Weights, 0), "weights", d);
        QVERIFY(d.worst > 1e-3);
    }

    // A layer scene made for one input and given another (putLayerInput) is the scene made for
    // that input, in every field the file holds: what the window does on every text edit.
    void anotherInputGivesTheSameSceneAsMadeAfresh() {
        for (const QString& name : kGoldenModels) {
            const io::ModelFolder folder(goldenModelDir(name));
            const model::Model& m = folder.model();
            const bool bert = m.config.family == model::Family::Bert;
            model::RunOptions padded;
            if (bert) padded.attentionMask = {1, 1, 1, 1, 0};
            const std::vector<long long> idsA{1, 2, 3, 4, 5}, idsB{7, 3, 9};
            const auto runA = model::runModel<double>(m, idsA, padded);
            const auto runB = model::runModel<double>(m, idsB, {});
            for (int layer = 0; layer < m.config.layers; ++layer) {
                Scene reused = model::layerScene(m, runA, layer, {"a", "b", "c", "d", "e"});
                model::putLayerInput(reused, m, runB, layer, {"x", "y", "z"});
                const Scene fresh = model::layerScene(m, runB, layer, {"x", "y", "z"});
                QVERIFY2(io::sceneToJson(reused) == io::sceneToJson(fresh),
                         qPrintable(name + QStringLiteral(" layer %1").arg(layer)));
                // And back to the padded input: the padding comes back with it.
                model::putLayerInput(reused, m, runA, layer, {"a", "b", "c", "d", "e"});
                QVERIFY(io::sceneToJson(reused) == io::sceneToJson(model::layerScene(
                                                       m, runA, layer, {"a", "b", "c", "d", "e"})));
                QCOMPARE(reused.mask.padding.empty(), !bert);
            }
        }
    }

    void layerOutsideTheModelIsRefused() {
        const io::ModelFolder folder(goldenModelDir("gpt2-tiny"));
        const auto run = model::runModel<double>(folder.model(), {1, 2, 3}, {});
        const int layers = folder.model().config.layers;
        try {
            model::layerScene(folder.model(), run, layers, {"1", "2", "3"});
            QFAIL("accepted a layer past the last");
        } catch (const model::ModelError& error) {
            QCOMPARE(
                QString::fromStdString(error.what()),
                QStringLiteral("--layer: expected 0 to %1, got %2").arg(layers - 1).arg(layers));
        }
    }
};

QTEST_GUILESS_MAIN(TestModelLayerScene)
#include "test_model_layer_scene.moc"
