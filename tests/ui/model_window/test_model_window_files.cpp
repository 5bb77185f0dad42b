// A whole model's scene in files: a saved scene with a model reopens it, a what-if saved and
// opened again is the same bit for bit, autosave keeps the model's what-ifs, and a model moved
// away is reported by name while the window keeps working.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_grid.h"
#include "plot/model_view.h"
#include "support/model_window_fixture.h"
#include "ui/files/autosave.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using test::gpt2Tiny;

namespace {

// A scene's numbers and settings as a file has them, without the window's view (which saving
// adds to).
QByteArray withoutView(Scene scene) {
    scene.viewJson.clear();
    return io::sceneToJson(scene);
}

}  // namespace

class TestModelWindowFiles : public QObject, private test::ModelWindowFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startModelWindowTests(QStringLiteral("test_model_window_files")); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void savedWhatIfReopensExactly();
    void savedSceneReopensTheModel();
    void autosaveKeepsTheWhatIf();
    void movedModelIsReportedInTheWindow();
};

// A what-if saved and opened again: the same scene, bit for bit, on the model, and nothing to
// save. Without the model the file is refused by name and the window keeps what it had.
void TestModelWindowFiles::savedWhatIfReopensExactly() {
    // The model beside the scene file, so the file holds its folder relative to itself (the
    // layer must still be found for what the file leaves out).
    const QString folder = dir_->filePath(QStringLiteral("models/gpt2"));
    QDir().mkpath(folder);
    for (const QString& name : QDir(gpt2Tiny()).entryList(QDir::Files))
        QVERIFY(QFile::copy(QDir(gpt2Tiny()).filePath(name), QDir(folder).filePath(name)));
    openModel(folder);
    emit window_->modelView()->headActivated(1, 2);
    settle();
    QVERIFY(window_->document()->setWeightValue(WeightMatrix::Query, 1, 2, -0.5));
    window_->document()->setScale({ScaleKind::Divisor, 3.0});
    settle();
    const QByteArray expected = withoutView(window_->document()->scene());
    const QString file = dir_->filePath(QStringLiteral("what-if.json"));
    QString error;
    QVERIFY2(window_->fileActions()->saveTo(file, &error), qPrintable(error));
    QFile saved(file);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QByteArray json = saved.readAll();
    QVERIFY(io::takesNumbersFromModel(json));
    QCOMPARE(QJsonDocument::fromJson(json)
                 .object()["view"]
                 .toObject()["model"]
                 .toObject()["folder"]
                 .toString(),
             QStringLiteral("models/gpt2"));
    QVERIFY2(json.size() * 4 < io::sceneToJson(window_->document()->scene()).size(),
             qPrintable(QStringLiteral("%1 of %2 bytes").arg(json.size()).arg(expected.size())));

    startAnotherWindow();
    QVERIFY(window_->openSceneFile(file, &error));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QVERIFY(withoutView(window_->document()->scene()) == expected);
    QCOMPARE(window_->document()->fileName(), QFileInfo(file).absoluteFilePath());
    QVERIFY(!window_->document()->isModified());
    QCOMPARE(session()->layer(), 1);
    QVERIFY(session()->currentRun() != session()->baseRun());

    // The same file, with its model gone.
    QTemporaryDir elsewhere;
    QJsonObject root = QJsonDocument::fromJson(json).object();
    QJsonObject view = root["view"].toObject();
    QJsonObject model = view["model"].toObject();
    model["folder"] = elsewhere.filePath(QStringLiteral("no-such-model"));
    view["model"] = model;
    root["view"] = view;
    const QString orphanFile = dir_->filePath(QStringLiteral("orphan.json"));
    QFile out(orphanFile);
    QVERIFY(out.open(QIODevice::WriteOnly));
    out.write(QJsonDocument(root).toJson());
    out.close();
    QSignalSpy refused(session(), &ModelSession::openRefused);
    window_->openSceneFile(orphanFile, &error);
    settle();
    QCOMPARE(refused.count(), 1);
    QVERIFY2(refused.first().first().toString().contains(QStringLiteral("no-such-model")),
             qPrintable(refused.first().first().toString()));
    QVERIFY(withoutView(window_->document()->scene()) == expected);  // nothing lost
}

void TestModelWindowFiles::savedSceneReopensTheModel() {
    openModel();
    session()->setIds({4, 8, 15, 16, 23});
    settle();
    emit window_->modelView()->headActivated(1, 3);
    settle();
    const QString file = dir_->filePath(QStringLiteral("with-model.json"));
    QString error;
    QVERIFY2(window_->fileActions()->saveTo(file, &error), qPrintable(error));
    // The folder, relative to the scene file when near it and absolute otherwise (where the
    // temporary folder lies decides which): either way it leads to the model; never the weights.
    QFile saved(file);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QJsonObject root = QJsonDocument::fromJson(saved.readAll()).object();
    const QJsonObject model =
        root[QLatin1String("view")].toObject()[QLatin1String("model")].toObject();
    const QString folder = model[QLatin1String("folder")].toString();
    QCOMPARE(QFileInfo(QDir(dir_->path()).filePath(folder)).canonicalFilePath(),
             QFileInfo(gpt2Tiny()).canonicalFilePath());
    QVERIFY(!folder.endsWith(QLatin1String(".safetensors")));
    // The layer's numbers are the model's: markers, not matrices.
    QCOMPARE(root["embeddings"].toObject()["from_model"], QJsonValue(true));
    QCOMPARE(root["projections"].toObject()["query"].toObject()["from_model"], QJsonValue(true));
    QCOMPARE(model[QLatin1String("layer")].toInt(), 1);
    QCOMPARE(model[QLatin1String("head")].toInt(), 3);

    startAnotherWindow(QSize(1024, 768));
    QVERIFY(window_->openSceneFile(file, &error));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QCOMPARE(session()->ids(), (std::vector<long long>{4, 8, 15, 16, 23}));
    QCOMPARE(session()->layer(), 1);
    QCOMPARE(session()->head(), 3);
    QCOMPARE(window_->grid()->head(), 3);
    // Saved with the explorer in front (a head was opened): it comes back in front.
    QCOMPARE(window_->centralTabs()->currentWidget(), window_->grid());
    QCOMPARE(session()->currentRun(), session()->baseRun());
    QVERIFY(!window_->document()->isModified());
}

void TestModelWindowFiles::autosaveKeepsTheWhatIf() {
    openModel();
    Scene::Ablation off;
    off.heads = {0, 3};
    off.byMean = true;
    window_->document()->setAblation(off);
    QVERIFY(window_->document()->setWeightValue(WeightMatrix::Value, 2, 5, 0.75));
    settle();
    const QByteArray expected = withoutView(window_->document()->scene());
    QVERIFY(window_->autosave()->writeIfChanged());
    QFile file(window_->autosave()->filePath());
    QVERIFY(file.open(QIODevice::ReadOnly));
    OrphanedAutosave orphan;
    orphan.file = file.fileName();
    orphan.contents = parseAutosave(file.readAll());
    // Kept without the model's numbers, as a saved file is; the what-ifs are in it.
    QVERIFY(orphan.contents.takesNumbersFromModel);
    QVERIFY(orphan.contents.sceneJson.contains("\"edits\""));
    const auto reference = modelReference(orphan.contents.scene.viewJson);
    QVERIFY(reference);
    QCOMPARE(reference->folder, QFileInfo(gpt2Tiny()).absoluteFilePath());
    QCOMPARE(reference->ids, session()->ids());

    // Restored in a new window: the model opens, and the scene is the one that was left.
    startAnotherWindow();
    window_->autosave()->restore(std::move(orphan));
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    QVERIFY(withoutView(window_->document()->scene()) == expected);
    QCOMPARE(window_->document()->scene().ablation, off);
    QVERIFY(window_->document()->isModified());
    QVERIFY(session()->currentRun() != session()->baseRun());  // the what-if flows again
}

void TestModelWindowFiles::movedModelIsReportedInTheWindow() {
    QTemporaryDir models;
    const QString folder = models.filePath(QStringLiteral("gpt2"));
    QDir().mkpath(folder);
    for (const QString& name : QDir(gpt2Tiny()).entryList(QDir::Files))
        QFile::copy(QDir(gpt2Tiny()).filePath(name), QDir(folder).filePath(name));
    openModel(folder);
    const QString file = dir_->filePath(QStringLiteral("moved.json"));
    QVERIFY(window_->fileActions()->saveTo(file));
    QVERIFY(QDir(folder).removeRecursively());
    // Another day, another window: the folder is gone.
    startAnotherWindow(QSize(1024, 768));
    QSignalSpy refused(session(), &ModelSession::openRefused);
    QVERIFY(window_->fileActions()->open(file));
    settle();
    QCOMPARE(refused.count(), 1);
    const QString message = refused.first().first().toString();
    QVERIFY2(message.contains(QLatin1String("not there")) &&
                 message.contains(QLatin1String("cannot be shown without it")),
             qPrintable(message));
    QVERIFY(!session()->isOpen());
    QCOMPARE(window_->centralWidget(), window_->grid());
    // The file holds only what was changed in the layer, not the model's numbers: the window
    // keeps the scene it had (the default, six tokens), working.
    QCOMPARE(window_->document()->scene().queryCount(), 6);
    QVERIFY(window_->document()->errorText().isEmpty());
}

QTEST_MAIN(TestModelWindowFiles)
#include "test_model_window_files.moc"
