// The Hugging Face hub cache as File › Open model lists it (io/model/hub_cache.h), on a fake cache
// laid out as huggingface_hub writes it: snapshots of symlinks into blobs/, refs/main, a model
// with only a pickle, an unsupported family, a broken symlink, and a dataset that is not a model.

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "core/model/model.h"
#include "io/model/hub_cache.h"
#include "io/model/model_folder.h"

using namespace ae;

namespace {

const QString kTiny = QStringLiteral(AE_TEST_DATA_DIR "/models/gpt2-tiny");

// A hub entry models--ORG--NAME with one snapshot `revision` whose files are symlinks to blobs
// holding `files` (name in the snapshot → source file to copy into the blob).
void addSnapshot(const QString& hub, const QString& entry, const QString& revision,
                 const QList<QPair<QString, QString>>& files) {
    const QDir root(QDir(hub).filePath(entry));
    QVERIFY(QDir().mkpath(root.filePath("blobs")));
    QVERIFY(QDir().mkpath(root.filePath("snapshots/" + revision)));
    int blob = 0;
    for (const auto& [name, source] : files) {
        const QString blobName = QStringLiteral("%1-%2").arg(revision).arg(blob++);
        if (!source.isEmpty()) QVERIFY(QFile::copy(source, root.filePath("blobs/" + blobName)));
        // Relative, as the hub writes them: ../../blobs/HASH.
        QVERIFY(QFile::link("../../blobs/" + blobName,
                            root.filePath("snapshots/" + revision + "/" + name)));
    }
}

void writeFile(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// What opening the folder says, or empty when it opens.
QString openingMessage(const QString& folder) {
    try {
        io::ModelFolder opened(folder);
        return {};
    } catch (const model::ModelError& e) {
        return QString::fromStdString(e.what());
    }
}

}  // namespace

class TestHubCache : public QObject {
    Q_OBJECT
private slots:
    void folderFollowsTheHubsVariables() {
        qputenv("HF_HUB_CACHE", "/somewhere/hub");
        qputenv("HF_HOME", "/home/x/hf");
        QCOMPARE(io::hubCacheFolder(), QStringLiteral("/somewhere/hub"));
        qunsetenv("HF_HUB_CACHE");
        QCOMPARE(io::hubCacheFolder(), QStringLiteral("/home/x/hf/hub"));
        qunsetenv("HF_HOME");
        QCOMPARE(io::hubCacheFolder(), QDir::home().filePath(".cache/huggingface/hub"));
    }

    void fakeCacheIsListed() {
        QTemporaryDir dir;
        const QString hub = dir.path();
        const QString config = kTiny + "/config.json", weights = kTiny + "/model.safetensors";
        // A good model with two snapshots: refs/main names the newer.
        addSnapshot(hub, "models--openai-community--gpt2", "old111", {{"config.json", config}});
        addSnapshot(hub, "models--openai-community--gpt2", "abc123",
                    {{"config.json", config}, {"model.safetensors", weights}});
        QVERIFY(QDir().mkpath(hub + "/models--openai-community--gpt2/refs"));
        writeFile(hub + "/models--openai-community--gpt2/refs/main", "abc123");
        // Only a pickle.
        QTemporaryDir scratch;
        writeFile(scratch.filePath("pytorch_model.bin"), "weights in a pickle");
        addSnapshot(hub, "models--org--binonly", "r1",
                    {{"config.json", config},
                     {"pytorch_model.bin", scratch.filePath("pytorch_model.bin")}});
        // An unsupported family.
        writeFile(scratch.filePath("mt5.json"), R"({"model_type": "mt5", "d_model": 32})");
        addSnapshot(
            hub, "models--google--mt5-small", "r1",
            {{"config.json", scratch.filePath("mt5.json")}, {"model.safetensors", weights}});
        // A broken symlink: the weights' blob was never downloaded.
        addSnapshot(hub, "models--org--partial", "r1",
                    {{"config.json", config}, {"model.safetensors", QString()}});
        // Not models.
        addSnapshot(hub, "datasets--org--text", "r1", {{"config.json", config}});
        QVERIFY(QDir().mkpath(hub + "/models--org--empty/snapshots"));

        const std::vector<io::HubModel> models = io::listHubModels(hub);
        QCOMPARE(int(models.size()), 4);
        QCOMPARE(models[0].name, QStringLiteral("google/mt5-small"));
        QCOMPARE(models[1].name, QStringLiteral("openai-community/gpt2"));
        QCOMPARE(models[2].name, QStringLiteral("org/binonly"));
        QCOMPARE(models[3].name, QStringLiteral("org/partial"));

        const io::HubModel& gpt2 = models[1];
        QVERIFY2(gpt2.snapshot.endsWith("snapshots/abc123"), qPrintable(gpt2.snapshot));
        QCOMPARE(gpt2.family, QStringLiteral("gpt2"));
        QCOMPARE(gpt2.dtype, QStringLiteral("F32"));
        QCOMPARE(gpt2.bytesOnDisk, QFileInfo(weights).size());
        QVERIFY2(gpt2.problem.isEmpty(), qPrintable(gpt2.problem));
        QVERIFY(openingMessage(gpt2.snapshot).isEmpty());

        // Each refusal is the one-line message opening the folder gives.
        for (const io::HubModel* m : {&models[0], &models[2], &models[3]}) {
            QVERIFY2(!m->problem.isEmpty(), qPrintable(m->name));
            QVERIFY(!m->problem.contains('\n'));
            QCOMPARE(m->problem, openingMessage(m->snapshot));
        }
        QVERIFY2(models[0].problem.contains(QStringLiteral("model_type \"mt5\" is not supported")),
                 qPrintable(models[0].problem));
        QCOMPARE(models[0].family, QStringLiteral("mt5"));
        QVERIFY(models[2].problem.contains(QStringLiteral("holds only pytorch_model.bin")));
        QVERIFY(models[3].problem.endsWith(
            QStringLiteral(": neither model.safetensors nor model.safetensors.index.json")));
        QCOMPARE(models[3].bytesOnDisk, qint64(0));

        QVERIFY(io::listHubModels(dir.filePath("missing")).empty());
    }
};

QTEST_MAIN(TestHubCache)
#include "test_hub_cache.moc"
