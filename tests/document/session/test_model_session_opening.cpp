// Opening a model in the session (document/model_session.h, document/model_opening.h): a folder
// or a built-in model by name runs and shows its first layer; a bad folder or an unknown name is
// refused and leaves the model open before; a cancelled opening leaves the window as it was.

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "support/model_session_fixture.h"

using namespace ae;
using namespace ae::document;
using namespace ae::testing;

class TestModelSessionOpening : public QObject {
    Q_OBJECT
private slots:
    void openRunsTheModel_data();
    void openRunsTheModel();
    void badFolderIsRefused();
    void cancelledOpeningLeavesTheWindowAsItWas();
    void builtInModelOpensByName();
};

void TestModelSessionOpening::openRunsTheModel_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"gpt2-tiny", "bert-tiny", "llama-tiny-gqa", "qwen3-tiny"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestModelSessionOpening::openRunsTheModel() {
    QFETCH(QString, name);
    Opened o;
    QVERIFY2(o.open(modelDir(name.toLatin1().constData())), qPrintable(o.session.problemText()));
    const io::ModelFolder folder(modelDir(name.toLatin1().constData()));
    const RunF expected = model::runModel<float>(folder.model(), o.session.ids());
    QVERIFY(o.session.baseRun());
    QVERIFY(sameRun(*o.session.baseRun(), expected));
    QCOMPARE(o.session.currentRun(), o.session.baseRun());
    QCOMPARE(o.session.layer(), 0);
    QCOMPARE(o.session.head(), 0);
    // The explorer shows layer 0, not modified, no undo step.
    QCOMPARE(o.document.scene().queryCount(), static_cast<int>(o.session.ids().size()));
    QCOMPARE(o.document.scene().heads, folder.model().config.heads);
    QVERIFY(!o.document.isModified());
    QCOMPARE(o.document.undoStack()->count(), 0);
    QCOMPARE(static_cast<int>(o.session.analysis().summaries.size()),
             folder.model().config.layers * folder.model().config.heads);
}

void TestModelSessionOpening::badFolderIsRefused() {
    QTemporaryDir dir;
    QFile bin(dir.filePath(QStringLiteral("pytorch_model.bin")));
    QVERIFY(bin.open(QIODevice::WriteOnly));
    bin.write("not really");
    bin.close();
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    const RunF before = *o.session.baseRun();
    QSignalSpy problems(&o.session, &ModelSession::problem);
    o.session.open(dir.path());
    o.settle();
    QCOMPARE(problems.count(), 1);
    const QString message = problems.first().first().toString();
    QVERIFY2(!message.contains(QLatin1Char('\n')) && message.contains(QLatin1String("config.json")),
             qPrintable(message));
    // The model open before, and its scene, stay.
    QVERIFY(o.session.isOpen());
    QVERIFY(o.session.folder().endsWith(QLatin1String("gpt2-tiny")));
    QVERIFY(sameRun(*o.session.baseRun(), before));
    QCOMPARE(o.session.layer(), 0);
}

// Busy shows after the progress delay (0 here); Cancel drops the result when it comes.
void TestModelSessionOpening::cancelledOpeningLeavesTheWindowAsItWas() {
    Opened o;
    o.document.resetScene(o.document.scene());
    const int tokens = o.document.scene().queryCount();
    QSignalSpy shown(&o.session, &ModelSession::progressShown);
    QSignalSpy problems(&o.session, &ModelSession::problem);
    o.session.open(modelDir("gpt2-tiny"));
    QVERIFY(o.session.isBusy());
    QCOMPARE(shown.count(), 1);
    QVERIFY(shown.first().first().toString().contains(QLatin1String("gpt2-tiny")));
    o.session.cancel();
    QVERIFY(!o.session.isBusy());
    QTest::qWait(300);  // the pass finishes on the worker; its result is dropped
    o.settle();
    QVERIFY(!o.session.isOpen());
    QCOMPARE(o.document.scene().queryCount(), tokens);
    QCOMPARE(problems.count(), 0);
}

void TestModelSessionOpening::builtInModelOpensByName() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("tiny-test"));
    copyFolder(modelDir("gpt2-tiny"), folder);
    writeAbout(folder, R"({"title": "Tiny", "ids": [3, 1, 4, 1, 5], "layer": 1, "head": 2})");
    const TestBuiltIns builtIns(dir.path());
    Opened o;
    QVERIFY2(o.open(QStringLiteral("builtin:tiny-test")), qPrintable(o.session.problemText()));
    QCOMPARE(o.session.builtInName(), QStringLiteral("tiny-test"));
    QCOMPARE(o.session.location(), QStringLiteral("builtin:tiny-test"));
    QCOMPARE(o.session.folder(), QDir::cleanPath(folder));
    // about.json's ids, layer and head (no tokenizer in the folder, so the ids).
    QCOMPARE(o.session.ids(), (std::vector<long long>{3, 1, 4, 1, 5}));
    QCOMPARE(o.session.layer(), 1);
    QCOMPARE(o.session.head(), 2);
    const io::ModelFolder direct(folder);
    QVERIFY(sameRun(*o.session.baseRun(), model::runModel<float>(direct.model(), o.session.ids())));
    const auto r = modelReference(o.document.scene().viewJson);
    QVERIFY(r);
    QCOMPARE(r->builtIn, QStringLiteral("tiny-test"));
    QVERIFY(!o.document.isModified());
    {
        // An autosave keeps the folder too; restored, the name wins over a folder that is gone.
        Scene restored = o.document.scene();
        ModelReference stale = *r;
        stale.folder = dir.filePath(QStringLiteral("gone/tiny-test"));
        restored.viewJson = withModelReference(restored.viewJson, stale);
        Opened p;
        p.document.resetScene(restored);
        p.settle();
        QVERIFY2(p.session.isOpen(), qPrintable(p.session.problemText()));
        QCOMPARE(p.session.folder(), QDir::cleanPath(folder));
        QCOMPARE(p.session.layer(), 1);
        QCOMPARE(p.session.head(), 2);
    }

    // Ids given by the caller win over about.json's; a layer about.json names that the model does
    // not have falls back to 0.
    writeAbout(folder, R"({"ids": [1, 2], "layer": 9, "head": 1})");
    QVERIFY(o.open(QStringLiteral("builtin:tiny-test")));
    QCOMPARE(o.session.ids(), (std::vector<long long>{1, 2}));
    QCOMPARE(o.session.layer(), 0);
    QCOMPARE(o.session.head(), 1);
    o.session.open(QStringLiteral("builtin:tiny-test"), {}, {7, 8, 9});
    o.settle();
    QCOMPARE(o.session.ids(), (std::vector<long long>{7, 8, 9}));

    // An unknown name is refused at once with the names there are; the model open stays.
    QSignalSpy refused(&o.session, &ModelSession::openRefused);
    o.session.open(QStringLiteral("builtin:nope"));
    o.settle();
    QCOMPARE(refused.count(), 1);
    QCOMPARE(refused.first().first().toString(),
             QStringLiteral("unknown built-in model \"nope\" (built-in models: tiny-test)"));
    QVERIFY(o.session.isOpen());
    QCOMPARE(o.session.builtInName(), QStringLiteral("tiny-test"));

    // With a tokenizer in the folder, about.json's text is what it opens on (its ids are for a
    // folder without one).
    const QString bert = dir.filePath(QStringLiteral("bert-test"));
    copyFolder(modelDir("bert-tiny"), bert);
    writeSmallVocabulary(bert);
    writeAbout(bert, R"({"text": "the cat sat", "ids": [9, 9]})");
    QVERIFY2(o.open(QStringLiteral("builtin:bert-test")), qPrintable(o.session.problemText()));
    QCOMPARE(o.session.text(), QStringLiteral("the cat sat"));
    QCOMPARE(o.session.ids(), (std::vector<long long>{2, 5, 6, 7, 3}));  // [CLS] … [SEP]
}

QTEST_MAIN(TestModelSessionOpening)
#include "test_model_session_opening.moc"
