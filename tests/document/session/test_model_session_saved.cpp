// A scene saved from a model's layer reopens that model (document/model_session.h): by its folder
// near the file, or by a built-in model's name on another machine, with the what-if; a moved,
// missing or changed model is reported and the layer stays as a plain scene.

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "io/formats/result_export.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "support/model_session_fixture.h"

using namespace ae;
using namespace ae::document;
using namespace ae::testing;

class TestModelSessionSaved : public QObject {
    Q_OBJECT
private slots:
    void savedSceneReopensTheModel();
    void movedModelIsReported();
    void changedModelIsReported();
    void builtInSceneReopensByNameElsewhere();
    void builtInSceneReportsAChangedOrMissingModel();
};

void TestModelSessionSaved::savedSceneReopensTheModel() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("models/gpt2"));
    copyFolder(modelDir("gpt2-tiny"), folder);
    const QString file = dir.filePath(QStringLiteral("scenes/layer.json"));
    QDir().mkpath(dir.filePath(QStringLiteral("scenes")));
    RunF saved;
    {
        Opened o;
        QVERIFY(o.open(folder));
        o.session.setIds({3, 1, 4, 1, 5});
        o.settle();
        o.session.openHead(1, 3);
        o.settle();
        divideScoresBy(o.document, 0.5);
        o.settle();
        saved = *o.session.currentRun();
        Scene scene = o.document.scene();
        scene.viewJson = withFolderRelativeTo(scene.viewJson, file);
        QCOMPARE(modelReference(scene.viewJson)->folder, QStringLiteral("../models/gpt2"));
        io::writeFileAtomically(file, io::sceneToJson(scene));
    }
    Opened o;
    Scene loaded = io::loadSceneFile(file);
    loaded.viewJson = withFolderResolvedFrom(loaded.viewJson, file);
    o.document.resetScene(loaded, file);
    o.settle();
    QVERIFY2(o.session.isOpen(), qPrintable(o.session.problemText()));
    QCOMPARE(o.session.ids(), (std::vector<long long>{3, 1, 4, 1, 5}));
    QCOMPARE(o.session.layer(), 1);
    QCOMPARE(o.session.head(), 3);
    QVERIFY(o.session.currentRun() != o.session.baseRun());
    QVERIFY(outputDifference(*o.session.currentRun(), saved) <= 1e-6);
}

void TestModelSessionSaved::movedModelIsReported() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("gpt2"));
    copyFolder(modelDir("gpt2-tiny"), folder);
    Scene scene;
    {
        Opened o;
        QVERIFY(o.open(folder));
        scene = o.document.scene();
    }
    QVERIFY(QDir(folder).removeRecursively());
    Opened o;
    QSignalSpy problems(&o.session, &ModelSession::problem);
    o.document.resetScene(scene);
    o.settle();
    QVERIFY(!o.session.isOpen());
    QCOMPARE(problems.count(), 1);
    const QString message = problems.first().first().toString();
    QVERIFY2(message.contains(folder) && message.contains(QLatin1String("not there")),
             qPrintable(message));
    // The layer is still there as a scene of its own.
    QCOMPARE(o.document.scene().queryCount(), scene.queryCount());
    QVERIFY(o.document.errorText().isEmpty());
}

void TestModelSessionSaved::changedModelIsReported() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("model"));
    copyFolder(modelDir("gpt2-tiny"), folder);
    Scene scene;
    {
        Opened o;
        QVERIFY(o.open(folder));
        scene = o.document.scene();
    }
    // The same folder now holds another model (here: one of another family).
    QVERIFY(QDir(folder).removeRecursively());
    copyFolder(modelDir("llama-tiny-gqa"), folder);
    Opened o;
    QSignalSpy problems(&o.session, &ModelSession::problem);
    o.document.resetScene(scene);
    o.settle();
    QVERIFY(!o.session.isOpen());
    QCOMPARE(problems.count(), 1);
    const QString message = problems.first().first().toString();
    QVERIFY2(message.contains(QLatin1String("changed since the scene was saved")) &&
                 message.contains(QLatin1String("gpt2 L2")) &&
                 message.contains(QLatin1String("llama")),
             qPrintable(message));
}

void TestModelSessionSaved::builtInSceneReopensByNameElsewhere() {
    // Saved on one machine (built-in models in `here`), opened on another (`there`: another
    // install prefix), with the same model under the same name.
    QTemporaryDir here, there, scenes;
    copyFolder(modelDir("gpt2-tiny"), here.filePath(QStringLiteral("tiny-test")));
    copyFolder(modelDir("gpt2-tiny"), there.filePath(QStringLiteral("tiny-test")));
    const QString file = scenes.filePath(QStringLiteral("layer.json"));
    RunF saved;
    {
        const TestBuiltIns builtIns(here.path());
        Opened o;
        QVERIFY(o.open(QStringLiteral("builtin:tiny-test")));
        o.session.setIds({3, 1, 4, 1, 5});
        o.settle();
        o.session.openHead(1, 3);
        o.settle();
        divideScoresBy(o.document, 0.5);
        o.settle();
        saved = *o.session.currentRun();
        Scene scene = o.document.scene();
        scene.viewJson = withFolderRelativeTo(scene.viewJson, file);
        io::writeFileAtomically(file, io::sceneToJson(scene));
    }
    // The file names the model, not where it was.
    QFile written(file);
    QVERIFY(written.open(QIODevice::ReadOnly));
    const QByteArray text = written.readAll();
    QVERIFY(text.contains("\"builtin\": \"tiny-test\"") ||
            text.contains("\"builtin\":\"tiny-test\""));
    QVERIFY(!text.contains(here.path().toUtf8()));
    QVERIFY(!text.contains("\"folder\""));

    const TestBuiltIns builtIns(there.path());
    Opened o;
    Scene loaded = io::loadSceneFile(file);
    loaded.viewJson = withFolderResolvedFrom(loaded.viewJson, file);
    o.document.resetScene(loaded, file);
    o.settle();
    QVERIFY2(o.session.isOpen(), qPrintable(o.session.problemText()));
    QCOMPARE(o.session.builtInName(), QStringLiteral("tiny-test"));
    QCOMPARE(o.session.folder(), QDir::cleanPath(there.filePath(QStringLiteral("tiny-test"))));
    QCOMPARE(o.session.ids(), (std::vector<long long>{3, 1, 4, 1, 5}));
    QCOMPARE(o.session.layer(), 1);
    QCOMPARE(o.session.head(), 3);
    QVERIFY(o.session.currentRun() != o.session.baseRun());  // the what-if came back
    QVERIFY(outputDifference(*o.session.currentRun(), saved) <= 1e-6);
    QVERIFY(!o.document.isModified());
    // Another head of the same layer keeps the name in the reference.
    o.session.openHead(1, 0);
    o.settle();
    QCOMPARE(modelReference(o.document.scene().viewJson)->builtIn, QStringLiteral("tiny-test"));
    QCOMPARE(o.session.head(), 0);
}

void TestModelSessionSaved::builtInSceneReportsAChangedOrMissingModel() {
    QTemporaryDir here, changed, none;
    copyFolder(modelDir("gpt2-tiny"), here.filePath(QStringLiteral("tiny-test")));
    copyFolder(modelDir("llama-tiny-gqa"), changed.filePath(QStringLiteral("tiny-test")));
    Scene scene;
    {
        const TestBuiltIns builtIns(here.path());
        Opened o;
        QVERIFY(o.open(QStringLiteral("builtin:tiny-test")));
        scene = o.document.scene();
        scene.viewJson = withFolderRelativeTo(scene.viewJson, QStringLiteral("/x/s.json"));
    }
    {
        // Another model under the same name: reported, not silently used.
        const TestBuiltIns builtIns(changed.path());
        Opened o;
        QSignalSpy problems(&o.session, &ModelSession::problem);
        o.document.resetScene(scene);
        o.settle();
        QVERIFY(!o.session.isOpen());
        QCOMPARE(problems.count(), 1);
        const QString message = problems.first().first().toString();
        QVERIFY2(message.startsWith(QStringLiteral("built-in model tiny-test (")) &&
                     message.contains(QLatin1String("the model changed since the scene was saved")),
                 qPrintable(message));
        QCOMPARE(o.document.scene().queryCount(), scene.queryCount());
    }
    {
        // No such built-in model here.
        const TestBuiltIns builtIns(none.path());
        Opened o;
        QSignalSpy refused(&o.session, &ModelSession::openRefused);
        o.document.resetScene(scene);
        o.settle();
        QVERIFY(!o.session.isOpen());
        QCOMPARE(refused.count(), 1);
        QCOMPARE(refused.first().first().toString(),
                 QStringLiteral("unknown built-in model \"tiny-test\" (no built-in models are "
                                "installed); the saved layer is shown as a plain scene"));
        QCOMPARE(o.document.scene().queryCount(), scene.queryCount());
    }
}

QTEST_MAIN(TestModelSessionSaved)
#include "test_model_session_saved.moc"
