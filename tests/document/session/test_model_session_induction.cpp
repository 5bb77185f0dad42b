// Induction scores in the model session (document/model_runs.h): measured after the run on the
// text repeated, measured again on a what-if that switches heads off, marked stale on any other,
// and refused with the reason when the text cannot be repeated.

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

class TestModelSessionInduction : public QObject {
    Q_OBJECT
private slots:
    void inductionFollowsTheResults();
    void whatIfRemeasuresInductionOrMarksItStale();
    void inductionSaysWhyItCannotBeMeasured();
    void aStaleInductionPassStopsBetweenLayers();
};

// The maps come first; the induction scores, a second pass on the text repeated, follow on the
// worker and equal the library's on that pass. A newer text drops a stale measurement.
void TestModelSessionInduction::inductionFollowsTheResults() {
    Opened o;
    const std::vector<long long> ids = {5, 9, 13, 21, 34, 2};
    QVERIFY(o.openOn(modelDir("gpt2-tiny"), ids));
    const io::ModelFolder folder(modelDir("gpt2-tiny"));
    QVERIFY(o.session.baseRun());
    QCOMPARE(o.session.baseRun()->tokens, ids);
    std::vector<long long> twice = ids;
    twice.insert(twice.end(), ids.begin(), ids.end());
    const std::vector<double> expected =
        model::inductionScores(model::runModel<float>(folder.model(), twice), 0, int(ids.size()));
    o.session.waitUntilIdle(true);
    const auto& summaries = o.session.analysis().summaries;
    QCOMPARE(summaries.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
        QVERIFY(!std::isnan(summaries[i].induction));
        QVERIFY(std::fabs(summaries[i].induction - expected[i]) < 1e-6);
    }
    // Two texts in a row: the scores shown are the second one's.
    std::vector<long long> other = {1, 2, 3, 4, 5, 6, 7};
    o.session.setIds(ids);
    o.session.setIds(other);
    o.settle();
    o.session.waitUntilIdle(true);
    std::vector<long long> otherTwice = other;
    otherTwice.insert(otherTwice.end(), other.begin(), other.end());
    const std::vector<double> expectedOther = model::inductionScores(
        model::runModel<float>(folder.model(), otherTwice), 0, int(other.size()));
    for (std::size_t i = 0; i < expectedOther.size(); ++i)
        QVERIFY(std::fabs(o.session.analysis().summaries[i].induction - expectedOther[i]) < 1e-6);
}

// A what-if that switches heads off is measured again on the model with them off (the same
// scores as a run of the text repeated with those heads ablated); any other what-if keeps the
// model's scores, marked stale, with why. Undo gives the model's own scores back, measured.
void TestModelSessionInduction::whatIfRemeasuresInductionOrMarksItStale() {
    Opened o;
    const std::vector<long long> ids = {5, 9, 13, 21, 34, 2};
    QVERIFY(o.openOn(modelDir("gpt2-tiny"), ids));
    const io::ModelFolder folder(modelDir("gpt2-tiny"));
    o.settle();
    o.session.waitUntilIdle(true);
    QCOMPARE(o.session.analysis().induction, model::InductionState::Measured);
    const std::vector<model::HeadSummary> own = o.session.analysis().summaries;
    std::vector<long long> twice = ids;
    twice.insert(twice.end(), ids.begin(), ids.end());

    Scene ablated = o.document.scene();  // layer 0
    ablated.ablation.heads = {1};
    ablated.ablation.byMean = false;
    QVERIFY(o.document.replaceScene(ablated, QStringLiteral("Switch head 1 off")));
    o.settle();
    o.session.waitUntilIdle(true);
    model::RunOptions off;
    off.ablations = {{0, 1}};
    const std::vector<double> expected = model::inductionScores(
        model::runModel<float>(folder.model(), twice, off), 0, int(ids.size()));
    const auto& measured = o.session.analysis().summaries;
    QCOMPARE(o.session.analysis().induction, model::InductionState::Measured);
    QCOMPARE(measured.size(), expected.size());
    bool moved = false;
    for (std::size_t i = 0; i < expected.size(); ++i) {
        QVERIFY2(std::fabs(measured[i].induction - expected[i]) < 1e-6,
                 qPrintable(QStringLiteral("head %1: %2, expected %3")
                                .arg(i)
                                .arg(measured[i].induction)
                                .arg(expected[i])));
        moved = moved || std::fabs(measured[i].induction - own[i].induction) > 1e-4;
    }
    QVERIFY(moved);  // layer 1's heads read layer 0's output: the what-if is not the model

    divideScoresBy(o.document, 0.25);  // and the scale: this what-if cannot be carried over
    o.settle();
    o.session.waitUntilIdle(true);
    QCOMPARE(o.session.analysis().induction, model::InductionState::Stale);
    QVERIFY2(o.session.analysis().inductionNote.contains(QStringLiteral("without the what-if")),
             qPrintable(o.session.analysis().inductionNote));
    for (std::size_t i = 0; i < own.size(); ++i)
        QCOMPARE(o.session.analysis().summaries[i].induction, own[i].induction);

    o.document.undoStack()->undo();
    o.document.undoStack()->undo();
    o.settle();
    o.session.waitUntilIdle(true);
    QCOMPARE(o.session.analysis().induction, model::InductionState::Measured);
    for (std::size_t i = 0; i < own.size(); ++i)
        QCOMPARE(o.session.analysis().summaries[i].induction, own[i].induction);
}

// gpt2-tiny has 32 positions: 20 tokens repeated are 40. Measuring says so, by the numbers.
void TestModelSessionInduction::inductionSaysWhyItCannotBeMeasured() {
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    std::vector<long long> ids;
    for (int i = 0; i < 20; ++i)
        ids.push_back(3 + i);
    o.session.setIds(ids);
    o.settle();
    o.session.waitUntilIdle(true);
    QCOMPARE(o.session.analysis().induction, model::InductionState::Unmeasurable);
    const QString note = o.session.analysis().inductionNote;
    QVERIFY2(note.contains(QStringLiteral("40 tokens")) && note.contains(QStringLiteral("32")) &&
                 note.contains(QStringLiteral("16 tokens or fewer")),
             qPrintable(note));
    QSignalSpy problems(&o.session, &ModelSession::problem);
    o.session.measureInduction();
    QCOMPARE(problems.size(), 1);
    QVERIFY(problems.first().first().toString().contains(note));
}

QTEST_MAIN(TestModelSessionInduction)
// The repeated text's pass asks after every layer whether to go on (a newer text makes it stale,
// and on a big model it takes minutes): told to stop, it stops there and measures nothing; let
// run, it asks once a layer and measures.
void TestModelSessionInduction::aStaleInductionPassStopsBetweenLayers() {
    const io::ModelFolder folder(modelDir("gpt2-tiny"));
    const model::Model& m = folder.model();
    const std::vector<long long> ids = {5, 9, 13, 21, 34, 2};
    for (bool dropMaps : {false, true}) {
        const AnalysedRun analysed =
            runAndAnalyse(m, {{}, ids, {}}, -1, dropMaps ? 1.0 : defaultMapBudget());
        QCOMPARE(keepsOnlyDigests(*analysed.run), dropMaps);
        int asked = 0;
        const InductionResult measured = inductionOf(*analysed.run, m, {}, [&] {
            ++asked;
            return true;
        });
        QVERIFY(measured.problem.isEmpty());
        QCOMPARE(measured.scores.size(), std::size_t(m.config.layers * m.config.heads));
        QCOMPARE(asked, m.config.layers);
        asked = 0;
        QVERIFY_THROWS_EXCEPTION(model::RunCancelled, inductionOf(*analysed.run, m, {}, [&] {
                                     ++asked;
                                     return false;
                                 }));
        QCOMPARE(asked, 1);
    }
}

#include "test_model_session_induction.moc"
