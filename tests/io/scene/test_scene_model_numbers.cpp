// A scene made from a model's layer is saved without the model's numbers (issue 16: "saved as a
// path to the folder, never the weights"): each matrix the model gives is a marker, with the
// user's edits when there are a few, and reads back bit for bit given the layer as the model has
// it. Without the model such a file is refused by name.
#include <QtTest>

#include "core/model/model_layer_scene.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

Scene layerOf(const QString& name, int layer) {
    const io::ModelFolder folder(goldenModelDir(name));
    const GoldenInput input = goldenInput(name);
    const auto run = model::runModel<double>(folder.model(), input.ids, input.options);
    Scene scene = model::layerScene(folder.model(), run, layer, input.labels);
    scene.viewJson = R"({"model":{"folder":"/somewhere","layer":0}})";
    return scene;
}

// Two scenes are the same when their explicit files are byte for byte the same.
bool same(const Scene& a, const Scene& b) {
    return io::sceneToJson(a) == io::sceneToJson(b);
}

QString refusal(const QByteArray& json, const Scene* layer) {
    try {
        if (layer) {
            io::parseScene(json, *layer);
        } else {
            io::parseScene(json);
        }
    } catch (const SceneError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

}  // namespace

class TestSceneModelNumbers : public QObject {
    Q_OBJECT
private slots:
    void anUneditedLayerHoldsNoWeights_data() {
        QTest::addColumn<QString>("name");
        for (const char* name : {"gpt2-tiny", "llama-tiny-gqa", "qwen3-tiny", "bert-tiny"})
            QTest::newRow(name) << QString(name);
    }

    // Every matrix is a marker, the file is a fraction of the explicit one, and it reads back
    // to the same scene.
    void anUneditedLayerHoldsNoWeights() {
        QFETCH(QString, name);
        const Scene layer = layerOf(name, 1);
        const QByteArray full = io::sceneToJson(layer);
        const QByteArray compact = io::sceneToJson(layer, layer);
        QVERIFY(io::takesNumbersFromModel(compact));
        QVERIFY(!io::takesNumbersFromModel(full));
        QVERIFY2(compact.size() * 4 < full.size(),
                 qPrintable(QStringLiteral("%1 of %2 bytes").arg(compact.size()).arg(full.size())));
        const QJsonObject o = QJsonDocument::fromJson(compact).object();
        QCOMPARE(o["embeddings"].toObject()["from_model"], QJsonValue(true));
        QCOMPARE(o["projections"].toObject()["query"].toObject()["from_model"], QJsonValue(true));
        QVERIFY(!compact.contains("edits"));
        QVERIFY(same(io::parseScene(compact, layer), layer));
    }

    // A weight, an embedding and a bias changed: each is one edit, and the scene reads back with
    // exactly those numbers.
    void aFewEditsAreKeptAsEdits() {
        const Scene layer = layerOf("gpt2-tiny", 0);
        Scene edited = layer;
        edited.projections.query(2, 3) = 0.125;
        edited.embeddings(1, 0) = -3.0 / 7.0;  // not a short decimal: the round trip is exact
        edited.projections.valueBias(1) = 2.5;
        edited.scale = {ScaleKind::Divisor, 3.0};
        const QByteArray compact = io::sceneToJson(edited, layer);
        const QJsonObject o = QJsonDocument::fromJson(compact).object();
        const QJsonArray queryEdits =
            o["projections"].toObject()["query"].toObject()["edits"].toArray();
        QCOMPARE(queryEdits.size(), 1);
        QCOMPARE(queryEdits[0].toArray(), (QJsonArray{2, 3, 0.125}));
        QCOMPARE(o["embeddings"].toObject()["edits"].toArray().size(), 1);
        QCOMPARE(o["projections"]
                     .toObject()["bias"]
                     .toObject()["value"]
                     .toObject()["edits"]
                     .toArray()[0]
                     .toArray(),
                 (QJsonArray{1, 2.5}));
        const Scene read = io::parseScene(compact, layer);
        QVERIFY(same(read, edited));
        QVERIFY(!same(read, layer));
    }

    // Saving writes the window's view in place of the scene's without copying the scene: the
    // file is the one the scene with that view gives, with and without the model's layer.
    void aViewGivenApartIsTheViewWritten() {
        const Scene layer = layerOf("gpt2-tiny", 0);
        Scene edited = layer;
        edited.projections.key(0, 1) = 0.5;
        edited.viewJson = R"({"stage":"scores"})";
        const std::string view = R"({"stage":"weights","head":1})";
        Scene withView = edited;
        withView.viewJson = view;
        QCOMPARE(io::sceneToJson(edited, &layer, view), io::sceneToJson(withView, layer));
        QCOMPARE(io::sceneToJson(edited, nullptr, view), io::sceneToJson(withView));
        QVERIFY(io::sceneToJson(edited, &layer, view) != io::sceneToJson(edited, layer));
    }

    // A matrix mostly changed is written out: its numbers are the user's, not the model's.
    void aMatrixMostlyChangedIsWrittenOut() {
        const Scene layer = layerOf("llama-tiny-gqa", 0);
        Scene edited = layer;
        edited.projections.output.array() += 1.0;
        const QByteArray compact = io::sceneToJson(edited, layer);
        const QJsonObject o = QJsonDocument::fromJson(compact).object();
        QVERIFY(o["projections"].toObject()["output"].isArray());
        QVERIFY(o["projections"].toObject()["query"].isObject());
        QVERIFY(same(io::parseScene(compact, layer), edited));
    }

    void withoutItsModelTheFileIsRefusedByName() {
        const Scene layer = layerOf("gpt2-tiny", 0);
        const QString message = refusal(io::sceneToJson(layer, layer), nullptr);
        QVERIFY2(message.startsWith("embeddings: ") && message.contains("view.model"),
                 qPrintable(message));
    }

    // Another model's layer: the first field that does not fit is named.
    void aModelOfOtherShapesIsRefused() {
        const Scene gpt2 = layerOf("gpt2-tiny", 0);
        const Scene llama = layerOf("llama-tiny-gqa", 0);
        const QString message = refusal(io::sceneToJson(gpt2, gpt2), &llama);
        QVERIFY2(message.contains(": the model's"), qPrintable(message));
        // The same model at another length: the residual stream has other rows.
        Scene shorter = gpt2;
        shorter.embeddings.conservativeResize(gpt2.embeddings.rows() - 1, Eigen::NoChange);
        const QString rows = refusal(io::sceneToJson(gpt2, gpt2), &shorter);
        QVERIFY2(rows.startsWith("embeddings: the model's is ") && rows.contains("the scene needs"),
                 qPrintable(rows));
    }

    void badEditsAreRefused_data() {
        QTest::addColumn<QByteArray>("edits");
        QTest::addColumn<QString>("expected");
        QTest::newRow("outside") << QByteArray("[[0, 999, 1.0]]")
                                 << "projections.query.edits[0]: entry (0, 999) outside";
        QTest::newRow("short") << QByteArray("[[0, 1]]")
                               << "projections.query.edits[0]: expected [row, column, value]";
        QTest::newRow("negative") << QByteArray("[[-1, 0, 1.0]]")
                                  << "projections.query.edits[0][0]:";
        QTest::newRow("not a number")
            << QByteArray("[[0, 0, \"x\"]]") << "projections.query.edits[0][2]:";
        QTest::newRow("not a list")
            << QByteArray("7") << "projections.query.edits: expected a list";
    }

    void badEditsAreRefused() {
        QFETCH(QByteArray, edits);
        QFETCH(QString, expected);
        const Scene layer = layerOf("gpt2-tiny", 0);
        Scene edited = layer;
        edited.projections.query(0, 0) += 1.0;
        QByteArray json = io::sceneToJson(edited, layer);
        QJsonObject o = QJsonDocument::fromJson(json).object();
        QJsonObject projections = o["projections"].toObject();
        QJsonObject query = projections["query"].toObject();
        query["edits"] = QJsonDocument::fromJson("{\"e\":" + edits + "}").object()["e"];
        projections["query"] = query;
        o["projections"] = projections;
        const QString message = refusal(QJsonDocument(o).toJson(), &layer);
        QVERIFY2(message.startsWith(expected), qPrintable(message));
    }

    void anUnknownFieldInAMarkerIsRefused() {
        const Scene layer = layerOf("gpt2-tiny", 0);
        QJsonObject o = QJsonDocument::fromJson(io::sceneToJson(layer, layer)).object();
        o["embeddings"] = QJsonObject{{"from_model", true}, {"scale", 2}};
        const QString message = refusal(QJsonDocument(o).toJson(), &layer);
        QVERIFY2(message.startsWith("embeddings.scale: unknown field"), qPrintable(message));
    }

    // A token whose text is the marker's name is only text.
    void aTokenNamedLikeTheMarkerIsText() {
        Scene scene = io::loadPreset(QStringLiteral("default"));
        scene.tokens[0] = "from_model";
        const QByteArray json = io::sceneToJson(scene);
        QVERIFY(json.contains("\"from_model\""));
        QVERIFY(!io::takesNumbersFromModel(json));
    }
};

QTEST_GUILESS_MAIN(TestSceneModelNumbers)
#include "test_scene_model_numbers.moc"
