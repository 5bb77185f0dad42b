// The model session's input (document/model_session.h): typed ids and text (tokenized once the
// typing stops) run the model again as one undo step; padding marks tokens of bert; refused ids
// keep the run.

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

class TestModelSessionInput : public QObject {
    Q_OBJECT
private slots:
    void idsChangeRerunsAndUndoes();
    void textIsTokenizedAfterTyping();
    void paddingMarksBert();
    void refusedIdsKeepTheRun();
};

void TestModelSessionInput::idsChangeRerunsAndUndoes() {
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    const RunF first = *o.session.baseRun();
    const std::vector<long long> ids = {5, 9, 12, 40};
    o.session.setIds(ids);
    o.settle();
    QCOMPARE(o.session.baseRun()->tokens, ids);
    const io::ModelFolder folder(modelDir("gpt2-tiny"));
    QVERIFY(sameRun(*o.session.baseRun(), model::runModel<float>(folder.model(), ids)));
    QCOMPARE(o.document.scene().queryCount(), 4);
    QCOMPARE(o.document.undoStack()->count(), 1);
    QVERIFY(o.document.isModified());

    o.document.undoStack()->undo();
    o.settle();
    QCOMPARE(o.session.ids(), first.tokens);
    QVERIFY(sameRun(*o.session.baseRun(), first));
    QVERIFY(sameRun(*o.session.currentRun(), first));
    o.document.undoStack()->redo();
    o.settle();
    QCOMPARE(o.session.ids(), ids);
}

void TestModelSessionInput::textIsTokenizedAfterTyping() {
    QTemporaryDir dir;
    const QString folder = dir.filePath(QStringLiteral("bert"));
    copyFolder(modelDir("bert-tiny"), folder);
    writeSmallVocabulary(folder);
    Opened o;
    QVERIFY2(o.open(folder), qPrintable(o.session.problemText()));
    QVERIFY(o.session.tokenizer());
    o.session.setText(QStringLiteral("the"));
    o.session.setText(QStringLiteral("the cat"));
    o.session.setText(QStringLiteral("the cat sat"));
    o.settle();
    // [CLS] the cat sat [SEP]; the typing was one run, one undo step.
    QCOMPARE(o.session.ids(), (std::vector<long long>{2, 5, 6, 7, 3}));
    QCOMPARE(o.session.baseRun()->tokens, o.session.ids());
    QCOMPARE(o.document.undoStack()->count(), 1);
    QCOMPARE(o.session.tokenLabel(6), QStringLiteral("cat"));
    QCOMPARE(o.document.scene().tokens[2], std::string("cat"));
}

void TestModelSessionInput::paddingMarksBert() {
    Opened o;
    QVERIFY(o.open(modelDir("bert-tiny")));
    const int last = static_cast<int>(o.session.ids().size()) - 1;
    o.session.setPadding(last, true);
    o.settle();
    QCOMPARE(static_cast<int>(o.session.attentionMask().size()), last + 1);
    QCOMPARE(o.session.attentionMask()[static_cast<std::size_t>(last)], 0);
    QCOMPARE(o.session.baseRun()->attentionMask, o.session.attentionMask());
    QVERIFY(o.document.scene().mask.padding[static_cast<std::size_t>(last)]);
    // No query attends to the padding.
    for (const auto& w : o.session.baseRun()->layers[0].weights)
        QCOMPARE(w.col(last).cwiseAbs().maxCoeff(), 0.0f);
}

void TestModelSessionInput::refusedIdsKeepTheRun() {
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    const std::vector<long long> before = o.session.ids();
    QSignalSpy problems(&o.session, &ModelSession::problem);
    o.session.setIds({1, 2, 999});
    o.settle();
    QCOMPARE(problems.count(), 1);
    QVERIFY(problems.first().first().toString().contains(QLatin1String("999")));
    QCOMPARE(o.session.ids(), before);
    QCOMPARE(o.document.undoStack()->count(), 0);
}

QTEST_MAIN(TestModelSessionInput)
#include "test_model_session_input.moc"
