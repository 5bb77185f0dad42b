// Whole models against the reference: every golden model (tests/data/models, made by
// shared/reference/model_reference.py in float64) run in double matches its expected output to
// 1e-4 relative, float stays close to double, and the same weights open from an HF cache
// snapshot (symlinks to blobs) and from two shards with an index.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "core/model/model.h"
#include "io/formats/safetensors.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"
#include "support/safetensors_writer.h"

using namespace ae;
using namespace ae::testing;

namespace {

constexpr double kTolerance = 1e-4;  // the reference's own (model_reference.py TOLERANCE)

// The expected result files of a golden model: A, and B for bert (padding).
QStringList expectedFiles(const QString& dir) {
    return QDir(dir).entryList({"expected-ids-*.json"}, QDir::Files, QDir::Name);
}

Difference runAgainst(const QString& dir, const QString& expectedName) {
    const QJsonObject expected = readJsonFile(QDir(dir).filePath(expectedName));
    const io::ModelFolder folder(dir);
    const auto run = model::runModel<double>(
        folder.model(), jsonIds(expected.value("tokens").toArray()), referenceOptions(expected));
    return compareWithReference(run, expected);
}

}  // namespace

class TestModelGolden : public QObject {
    Q_OBJECT

private slots:
    void matchesReferenceInDouble_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("expected");
        for (const QString& name : kGoldenModels)
            for (const QString& file : expectedFiles(goldenModelDir(name)))
                QTest::newRow(qPrintable(name + "/" + file)) << name << file;
    }
    void matchesReferenceInDouble() {
        QFETCH(QString, name);
        QFETCH(QString, expected);
        const Difference d = runAgainst(goldenModelDir(name), expected);
        qInfo("%s %s: worst relative error %.3g at %s", qPrintable(name), qPrintable(expected),
              d.worst, qPrintable(d.where));
        QVERIFY2(d.worst <= kTolerance, qPrintable(d.where));
    }

    // Every family has a golden model with each expected file (bert: A and B with padding).
    void everyFamilyIsCovered() {
        QCOMPARE(expectedFiles(goldenModelDir("bert-tiny")),
                 QStringList({"expected-ids-A.json", "expected-ids-B.json"}));
        const QJsonObject b = readJsonFile(goldenModelDir("bert-tiny") + "/expected-ids-B.json");
        QVERIFY(b.value("attention_mask").toArray().contains(0));
        const io::ModelFolder bf16(goldenModelDir("llama-tiny-bf16"));
        QCOMPARE(bf16.model().weights.layers[0].query.dtype, DType::BF16);
    }

    // float follows double closely on every golden model.
    void floatCloseToDouble_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : kGoldenModels)
            QTest::newRow(qPrintable(name)) << name;
    }
    void floatCloseToDouble() {
        QFETCH(QString, name);
        const QJsonObject expected = readJsonFile(goldenModelDir(name) + "/expected-ids-A.json");
        const io::ModelFolder folder(goldenModelDir(name));
        const auto ids = jsonIds(expected.value("tokens").toArray());
        const auto single = model::runModel<float>(folder.model(), ids);
        const auto dbl = model::runModel<double>(folder.model(), ids);
        const double worst = worstBetween(single, dbl);
        qInfo("%s: float against double, worst relative error %.3g", qPrintable(name), worst);
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
        QVERIFY(worst > 0);  // it really ran in float
        QVERIFY2(compareWithReference(single, expected).worst < 1e-4,
                 qPrintable(compareWithReference(single, expected).where));
    }

    // A decoder's row i sees keys 0..i only; bert's every key; hidden keys weigh exactly 0.
    void masksAreExact() {
        const io::ModelFolder gpt2(goldenModelDir("gpt2-tiny"));
        const auto run = model::runModel<double>(gpt2.model(), {7, 41, 3, 59});
        const auto& w = run.layers[1].weights[2];
        for (int i = 0; i < 4; ++i) {
            QVERIFY(std::fabs(w.row(i).sum() - 1.0) < 1e-12);
            for (int j = i + 1; j < 4; ++j)
                QCOMPARE(w(i, j), 0.0);
        }
        const io::ModelFolder bert(goldenModelDir("bert-tiny"));
        model::RunOptions padded;
        padded.attentionMask = {1, 1, 0};
        const auto b = model::runModel<double>(bert.model(), {7, 41, 3}, padded);
        QCOMPARE(b.layers[0].weights[0](0, 2), 0.0);
        QVERIFY(b.layers[0].weights[0](0, 1) > 0);
        QVERIFY(b.layers[0].weights[0](2, 0) > 0);  // a padding query still attends
    }

    // A rotary model has no position table: a text longer than max_position_embeddings' small
    // tables would be for gpt2 runs, and shifting every position changes q and k but not v.
    void rotaryHasNoHardLimit() {
        const io::ModelFolder llama(goldenModelDir("llama-tiny-gqa"));
        // Long enough that the heads are rotated on every thread: layer 0's q and k at position
        // p depend only on the token and p, so they equal a one-token run shifted to p.
        std::vector<long long> ids(2200);
        for (std::size_t i = 0; i < ids.size(); ++i)
            ids[i] = static_cast<long long>(i * 37 % 64);
        const auto run = model::runModel<float>(llama.model(), ids);
        QCOMPARE(run.logits.rows(), 2200);
        for (int p : {0, 1, 1000, 2199}) {
            model::RunOptions at;
            at.positionOffset = p;
            const auto one = model::runModel<float>(llama.model(), {ids[p]}, at);
            // (Equal up to the products' summation order, which differs with the row count.)
            for (int h = 0; h < 4; ++h) {
                QVERIFY((run.q(0, h).row(p) - one.q(0, h).row(0)).cwiseAbs().maxCoeff() < 1e-5f);
                QVERIFY((run.k(0, h).row(p) - one.k(0, h).row(0)).cwiseAbs().maxCoeff() < 1e-5f);
            }
        }
        model::RunOptions shifted;
        shifted.positionOffset = 3;
        const auto a = model::runModel<double>(llama.model(), {1, 2, 3});
        const auto b = model::runModel<double>(llama.model(), {1, 2, 3}, shifted);
        QVERIFY((a.v(0, 0) - b.v(0, 0)).cwiseAbs().maxCoeff() < 1e-15);
        QVERIFY((a.q(0, 0) - b.q(0, 0)).cwiseAbs().maxCoeff() > 1e-3);
        // Rotation preserves q·k between positions the same distance apart.
        QVERIFY((a.layers[0].scores[0] - b.layers[0].scores[0]).cwiseAbs().maxCoeff() < 1e-12);
    }

    // A Hugging Face cache snapshot: snapshots/REV/ holds symlinks into blobs/.
    void opensCacheSnapshotOfSymlinks() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        const QDir root(temp.path());
        QVERIFY(root.mkpath("blobs") && root.mkpath("snapshots/0123abcd"));
        const QString source = goldenModelDir("llama-tiny-bf16");
        int blob = 0;
        for (const QString& file : {"config.json", "model.safetensors", "expected-ids-A.json"}) {
            const QString blobPath =
                root.filePath(QStringLiteral("blobs/%1").arg(++blob, 40, 10, QChar('e')));
            QVERIFY(QFile::copy(source + "/" + file, blobPath));
            QVERIFY(QFile::link("../../blobs/" + QFileInfo(blobPath).fileName(),
                                root.filePath("snapshots/0123abcd/" + file)));
        }
        const QString snapshot = root.filePath("snapshots/0123abcd");
        QVERIFY(QFileInfo(snapshot + "/model.safetensors").isSymLink());
        const Difference d = runAgainst(snapshot, "expected-ids-A.json");
        QVERIFY2(d.worst <= kTolerance, qPrintable(d.where));
    }

    // The same weights split over two shards and an index open and give the same result.
    void opensShardsWithIndex() {
        QTemporaryDir temp;
        QVERIFY(temp.isValid());
        const QDir dir(temp.path());
        const QString source = goldenModelDir("gpt2-tiny");
        QVERIFY(QFile::copy(source + "/config.json", dir.filePath("config.json")));
        const io::SafetensorsFile file(source + "/model.safetensors");
        std::vector<TestTensor> shards[2];
        QJsonObject weightMap;
        int k = 0;
        for (const io::TensorInfo& info : file.tensors()) {
            const int shard = k++ % 2;
            const QByteArray bytes(reinterpret_cast<const char*>(file.tensorData(info)),
                                   info.end - info.begin);
            shards[shard].push_back({info.name, info.dtype, info.shape, bytes});
            weightMap.insert(
                info.name,
                QStringLiteral("model-%1-of-00002.safetensors").arg(shard + 1, 5, 10, QChar('0')));
        }
        QVERIFY(writeSafetensors(dir.filePath("model-00001-of-00002.safetensors"), shards[0]));
        QVERIFY(writeSafetensors(dir.filePath("model-00002-of-00002.safetensors"), shards[1]));
        QVERIFY(writeBytes(
            dir.filePath("model.safetensors.index.json"),
            QJsonDocument(QJsonObject{{"metadata", QJsonObject{}}, {"weight_map", weightMap}})
                .toJson()));
        QVERIFY(QFile::copy(source + "/expected-ids-A.json", dir.filePath("expected-ids-A.json")));
        const Difference d = runAgainst(dir.path(), "expected-ids-A.json");
        QVERIFY2(d.worst <= kTolerance, qPrintable(d.where));

        // A name the index puts in a shard that does not hold it is refused, naming both.
        const bool inFirst =
            weightMap.value("transformer.wte.weight").toString().contains("00001-of");
        weightMap.insert("transformer.wte.weight", inFirst ? "model-00002-of-00002.safetensors"
                                                           : "model-00001-of-00002.safetensors");
        QVERIFY(writeBytes(dir.filePath("model.safetensors.index.json"),
                           QJsonDocument(QJsonObject{{"weight_map", weightMap}}).toJson()));
        try {
            const io::ModelFolder broken(dir.path());
            QFAIL("not refused");
        } catch (const model::ModelError& e) {
            const QString m = e.what();
            QVERIFY2(m.contains("model.safetensors.index.json: transformer.wte.weight is not in "
                                "model-0000"),
                     e.what());
        }
    }

    // The same weights stored as F64, and (rounded to values a half holds exactly) as F16
    // beside F32, give the same numbers: the conversions are exact.
    void otherStoredDtypes() {
        const QString source = goldenModelDir("llama-tiny-gqa");
        const io::SafetensorsFile file(source + "/model.safetensors");
        QTemporaryDir wide, half, single;
        std::vector<TestTensor> f64, f16, f32;
        for (const io::TensorInfo& info : file.tensors()) {
            const MatrixD m = file.matrix(info.name);
            // Multiples of 1/1024 below 2 in magnitude: 11 significant bits, exact in a half.
            const MatrixD rounded = (m.array().max(-1.99).min(1.99) * 1024).round() / 1024;
            QByteArray bytes64;
            for (Eigen::Index k = 0; k < m.size(); ++k)
                bytes64.append(reinterpret_cast<const char*>(m.data() + k), 8);
            f64.push_back({info.name, "F64", info.shape, bytes64});
            f16.push_back(tensor(info.name, rounded, "F16", info.shape));
            f32.push_back(tensor(info.name, rounded, "F32", info.shape));
        }
        for (QTemporaryDir* dir : {&wide, &half, &single})
            QVERIFY(QFile::copy(source + "/config.json", dir->filePath("config.json")));
        QVERIFY(writeSafetensors(wide.filePath("model.safetensors"), f64));
        QVERIFY(writeSafetensors(half.filePath("model.safetensors"), f16));
        QVERIFY(writeSafetensors(single.filePath("model.safetensors"), f32));
        const std::vector<long long> ids = {7, 41, 3, 59, 22, 15, 36};
        const io::ModelFolder original(source), asF64(wide.path()), asF16(half.path()),
            asF32(single.path());
        QCOMPARE(asF64.model().weights.layers[1].down.dtype, DType::F64);
        QCOMPARE(asF16.model().weights.layers[1].down.dtype, DType::F16);
        QCOMPARE(worstBetween(model::runModel<double>(asF64.model(), ids),
                              model::runModel<double>(original.model(), ids)),
                 0.0);
        QCOMPARE(worstBetween(model::runModel<float>(asF64.model(), ids),
                              model::runModel<float>(original.model(), ids)),
                 0.0);
        QCOMPARE(worstBetween(model::runModel<float>(asF16.model(), ids),
                              model::runModel<float>(asF32.model(), ids)),
                 0.0);
        QCOMPARE(worstBetween(model::runModel<double>(asF16.model(), ids),
                              model::runModel<double>(asF32.model(), ids)),
                 0.0);
    }

    // Each weight is read where it lies: an F32 model in a float run is not copied, and every
    // stored byte is counted once (a tied head is the token table).
    void storedBytesCountEachTensorOnce() {
        const io::ModelFolder gpt2(goldenModelDir("gpt2-tiny"));
        const QFileInfo file(goldenModelDir("gpt2-tiny") + "/model.safetensors");
        const model::Model& m = gpt2.model();
        QCOMPARE(m.weights.lmHead.data, m.weights.tokenEmbedding.data);
        QVERIFY(m.storedBytes > 0.9 * static_cast<double>(file.size()) - 20000);
        QVERIFY(m.storedBytes <= static_cast<double>(file.size()));
        const model::RunMemory f32 = model::runMemory(m, 7, sizeof(float));
        QCOMPARE(f32.convertedLayer, 0.0);  // used in place
        const model::RunMemory f64 = model::runMemory(m, 7, sizeof(double));
        QVERIFY(f64.convertedLayer > 0);
    }
};

QTEST_GUILESS_MAIN(TestModelGolden)
#include "test_model_golden.moc"
