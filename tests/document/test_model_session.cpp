// The model session (document/model_session.h): a model folder opened in the document, its runs,
// the layer opened in the explorer, what-ifs flowing through the later layers, undo, and the
// reference a saved scene keeps.

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/formats/result_export.h"
#include "io/model/builtin_models.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"

using namespace ae;
using namespace ae::ui;

namespace {

using RunF = model::ModelRun<float>;

QString modelDir(const char* name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/") + QLatin1String(name);
}

template <typename A, typename B>
bool identical(const A& a, const B& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && (a.size() == 0 || a == b);
}

template <typename A, typename B>
double largestDifference(const A& a, const B& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e30;
    if (a.size() == 0) return 0.0;
    return static_cast<double>(
        (a.template cast<double>() - b.template cast<double>()).cwiseAbs().maxCoeff());
}

// Every kept matrix of two runs, bit for bit.
bool sameRun(const RunF& a, const RunF& b) {
    if (a.tokens != b.tokens || a.layers.size() != b.layers.size()) return false;
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        const auto &x = a.layers[l], &y = b.layers[l];
        if (!identical(x.hiddenIn, y.hiddenIn) || !identical(x.query, y.query) ||
            !identical(x.key, y.key) || !identical(x.value, y.value) ||
            x.keyValueHeads != y.keyValueHeads || x.weights.size() != y.weights.size())
            return false;
        for (std::size_t h = 0; h < x.weights.size(); ++h) {
            if (!identical(x.scores[h], y.scores[h]) || !identical(x.weights[h], y.weights[h]))
                return false;
        }
    }
    if (!identical(a.lastHidden, b.lastHidden)) return false;
    // The window's runs keep the last row of the logits only (RunOptions); then the final hidden
    // state every row comes from must agree.
    if (a.logitsFrom == b.logitsFrom && a.logits.rows() == b.logits.rows())
        return identical(a.logits, b.logits) && identical(a.finalHidden, b.finalHidden);
    return identical(a.finalHidden, b.finalHidden);
}

// A sharper softmax: scores divided by `divisor` instead of √d_head (one undo step).
void divideScoresBy(AttentionDocument& document, double divisor) {
    Scale sharp;
    sharp.kind = ScaleKind::Divisor;
    sharp.divisor = divisor;
    document.setScale(sharp);
}

double outputDifference(const RunF& a, const RunF& b) {
    return a.config.isDecoder() ? largestDifference(model::Matrix<float>(a.logits.bottomRows(1)),
                                                    model::Matrix<float>(b.logits.bottomRows(1)))
                                : largestDifference(a.lastHidden, b.lastHidden);
}

void copyFolder(const QString& from, const QString& to) {
    QDir().mkpath(to);
    for (const QString& name : QDir(from).entryList(QDir::Files))
        QFile::copy(QDir(from).filePath(name), QDir(to).filePath(name));
}

// A WordPiece vocabulary of 64 tokens, so that bert-tiny (V = 64) can take tokenized text.
void writeSmallVocabulary(const QString& folder) {
    QFile file(QDir(folder).filePath(QStringLiteral("vocab.txt")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    QStringList words = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",
                         "sat",   "on",    "mat",   "a",     "dog",    "ran"};
    while (words.size() < 64)
        words << QStringLiteral("w%1").arg(words.size());
    file.write(words.join(QLatin1Char('\n')).toUtf8() + "\n");
}

struct Opened {
    AttentionDocument document;
    ModelSession session{&document};
    Opened() { session.setProgressDelay(0); }
    bool open(const QString& folder) {
        session.open(folder);
        session.waitUntilIdle();
        document.waitForResults();
        session.waitUntilIdle();
        return session.isOpen();
    }
    // Opens `folder` and runs it on `ids`; the induction that follows may not have come yet.
    bool openOn(const QString& folder, const std::vector<long long>& ids) {
        if (!open(folder)) return false;
        session.setIds(ids);
        session.waitUntilIdle(false);
        return true;
    }
    void settle() {
        for (int i = 0; i < 3; ++i) {
            document.waitForResults();
            session.waitUntilIdle();
        }
    }
};

}  // namespace

class TestModelSession : public QObject {
    Q_OBJECT
private slots:
    void openRunsTheModel_data();
    void openRunsTheModel();
    void idsChangeRerunsAndUndoes();
    void inductionFollowsTheResults();
    void whatIfRemeasuresInductionOrMarksItStale();
    void inductionSaysWhyItCannotBeMeasured();
    void textIsTokenizedAfterTyping();
    void paddingMarksBert();
    void openedHeadIsTheLayer_data();
    void openedHeadIsTheLayer();
    void whatIfFlowsForward();
    void whatIfInLaterLayerLeavesEarlierOnes();
    void undoWhileAWhatIfComputesShowsTheModel();
    void resumedRunMatchesTheModel();
    void ablationIsAWhatIf();
    void savedSceneReopensTheModel();
    void movedModelIsReported();
    void changedModelIsReported();
    void badFolderIsRefused();
    void refusedIdsKeepTheRun();
    void referenceRoundTrips();
    void cancelledOpeningLeavesTheWindowAsItWas();
    void builtInModelOpensByName();
    void builtInSceneReopensByNameElsewhere();
    void builtInSceneReportsAChangedOrMissingModel();
    void builtInReferenceKeepsTheNameOnly();
    void keyValueCacheStatus_data();
    void keyValueCacheStatus();
    void keyValueHeadsWhatIfFlowsForward();
};

void TestModelSession::openRunsTheModel_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"gpt2-tiny", "bert-tiny", "llama-tiny-gqa", "qwen3-tiny"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void TestModelSession::openRunsTheModel() {
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

// The maps come first; the induction scores, a second pass on the text repeated, follow on the
// worker and equal the library's on that pass. A newer text drops a stale measurement.
void TestModelSession::inductionFollowsTheResults() {
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
void TestModelSession::whatIfRemeasuresInductionOrMarksItStale() {
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
void TestModelSession::inductionSaysWhyItCannotBeMeasured() {
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

void TestModelSession::idsChangeRerunsAndUndoes() {
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

void TestModelSession::textIsTokenizedAfterTyping() {
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

void TestModelSession::paddingMarksBert() {
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

void TestModelSession::openedHeadIsTheLayer_data() {
    openRunsTheModel_data();
}

// The explorer's engine on the layer scene computes what the model computed in that layer.
void TestModelSession::openedHeadIsTheLayer() {
    QFETCH(QString, name);
    Opened o;
    QVERIFY(o.open(modelDir(name.toLatin1().constData())));
    const model::Config& c = o.session.model()->config;
    const int layer = c.layers - 1, head = c.heads - 1;
    QSignalSpy opened(&o.session, &ModelSession::openHeadChanged);
    o.session.openHead(layer, head);
    o.settle();
    QCOMPARE(o.session.layer(), layer);
    QCOMPARE(o.session.head(), head);
    QCOMPARE(opened.count(), 1);
    QCOMPARE(o.document.undoStack()->count(), 1);
    const RunF& run = *o.session.baseRun();
    const auto& record = run.layers[static_cast<std::size_t>(layer)];
    const AttentionEngine<float>& engine = o.document.engine();
    QVERIFY(o.document.errorText().isEmpty());
    QVERIFY(largestDifference(engine.scene().embeddings, record.hiddenIn) == 0.0);
    QVERIFY(largestDifference(engine.query(), record.query) <= 1e-5);
    QVERIFY(largestDifference(engine.key(), record.key) <= 1e-5);
    QVERIFY(largestDifference(engine.value(), record.value) <= 1e-5);
    double worst = std::max(largestDifference(engine.query(), record.query),
                            largestDifference(engine.value(), record.value));
    for (int h = 0; h < c.heads; ++h) {
        QVERIFY(largestDifference(engine.scores(h), record.scores[h]) <= 1e-5);
        QVERIFY(largestDifference(engine.weights(h), record.weights[h]) <= 1e-5);
        worst = std::max(worst, largestDifference(engine.scores(h), record.scores[h]));
    }
    qInfo("%s layer %d: largest difference engine vs run %.3g", qPrintable(name), layer, worst);
    // Nothing changed, so the current run is the model's own.
    QCOMPARE(o.session.currentRun(), o.session.baseRun());
    o.document.undoStack()->undo();
    o.settle();
    QCOMPARE(o.session.layer(), 0);
}

void TestModelSession::whatIfFlowsForward() {
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    const RunF before = *o.session.currentRun();
    divideScoresBy(o.document, 0.25);
    o.settle();
    const RunF after = *o.session.currentRun();
    QVERIFY(o.session.currentRun() != o.session.baseRun());
    // Layer 0's input is untouched; its weights, layer 1 and the logits moved.
    QVERIFY(identical(after.layers[0].hiddenIn, before.layers[0].hiddenIn));
    QVERIFY(largestDifference(after.layers[0].weights[0], before.layers[0].weights[0]) > 1e-3);
    QVERIFY(largestDifference(after.layers[1].hiddenIn, before.layers[1].hiddenIn) > 1e-4);
    QVERIFY(largestDifference(after.layers[1].weights[0], before.layers[1].weights[0]) > 1e-6);
    QVERIFY(largestDifference(after.logits, before.logits) > 1e-4);
    const auto changed = o.session.changedHeads(0.01);
    QVERIFY(!changed.empty());
    QCOMPARE(changed.front().first, 0);
    QVERIFY(!o.session.analysis().basePredictions.empty());
    QCOMPARE(o.session.analysis().predictions.size(), std::size_t{10});

    // Undo takes it back everywhere, to the very same numbers.
    o.document.undoStack()->undo();
    o.settle();
    QCOMPARE(o.session.currentRun(), o.session.baseRun());
    QVERIFY(sameRun(*o.session.currentRun(), before));
    QVERIFY(o.session.changedHeads(0.01).empty());
    // Redo: the what-if again, to the same numbers.
    o.document.undoStack()->redo();
    o.settle();
    QVERIFY(sameRun(*o.session.currentRun(), after));
}

void TestModelSession::whatIfInLaterLayerLeavesEarlierOnes() {
    Opened o;
    QVERIFY(o.open(modelDir("llama-tiny-gqa")));
    o.session.openHead(1, 0);
    o.settle();
    const RunF before = *o.session.currentRun();
    QVERIFY(o.document.setWeightValue(WeightMatrix::Query, 0, 0, 3.0));
    o.settle();
    const RunF after = *o.session.currentRun();
    QVERIFY(sameRun(before, *o.session.baseRun()));
    for (std::size_t h = 0; h < before.layers[0].weights.size(); ++h)
        QVERIFY(identical(after.layers[0].weights[h], before.layers[0].weights[h]));
    QVERIFY(identical(after.layers[1].hiddenIn, before.layers[1].hiddenIn));
    QVERIFY(largestDifference(after.layers[1].query, before.layers[1].query) > 1e-4);
    QVERIFY(largestDifference(after.logits, before.logits) > 1e-5);
}

// An undo that comes while the what-if it takes back is still on the worker: the model's own
// run is shown, and the what-if's result, arriving later, is dropped.
void TestModelSession::undoWhileAWhatIfComputesShowsTheModel() {
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    const RunF before = *o.session.currentRun();
    divideScoresBy(o.document, 0.25);
    o.document.waitForResults();  // the layer is computed; the later layers are on the worker
    QVERIFY(o.session.isBusy());
    o.document.undoStack()->undo();
    o.settle();
    QCOMPARE(o.session.currentRun(), o.session.baseRun());
    QVERIFY(sameRun(*o.session.currentRun(), before));
    QVERIFY(!o.session.isBusy());
}

// A scene that computes the same layer by another road (the divisor given as a number instead
// of √d_head) goes through resumeAfterAttention: the model's own run comes back within float
// rounding.
void TestModelSession::resumedRunMatchesTheModel() {
    for (const char* name : {"gpt2-tiny", "bert-tiny", "qwen3-tiny"}) {
        Opened o;
        QVERIFY(o.open(modelDir(name)));
        Scale same = o.document.scene().scale;
        QCOMPARE(same.kind, ScaleKind::Divisor);
        const double dk = std::sqrt(static_cast<double>(o.document.scene().dHead()));
        QVERIFY2(std::abs(dk - same.divisor) <= 1e-12 * dk, name);  // the model scales by √hd
        same.kind = ScaleKind::SqrtDk;
        o.document.setScale(same);
        o.settle();
        QVERIFY(o.session.currentRun() != o.session.baseRun());
        QVERIFY2(outputDifference(*o.session.currentRun(), *o.session.baseRun()) <= 1e-4, name);
    }
}

void TestModelSession::ablationIsAWhatIf() {
    Opened o;
    QVERIFY(o.open(modelDir("gpt2-tiny")));
    const RunF before = *o.session.currentRun();
    Scene ablated = o.document.scene();
    ablated.ablation.heads = {2};
    ablated.ablation.byMean = false;
    QVERIFY(o.document.replaceScene(ablated, QStringLiteral("Switch head 2 off")));
    o.settle();
    QVERIFY(o.session.currentRun() != o.session.baseRun());
    QVERIFY(largestDifference(o.session.currentRun()->logits, before.logits) > 1e-5);
    // Layer 0's own weights are untouched by switching a head off; layer 1's moved.
    QVERIFY(identical(o.session.currentRun()->layers[0].hiddenIn, before.layers[0].hiddenIn));
    QVERIFY(largestDifference(o.session.currentRun()->layers[1].hiddenIn,
                              before.layers[1].hiddenIn) > 1e-5);
    o.document.undoStack()->undo();
    o.settle();
    QVERIFY(sameRun(*o.session.currentRun(), before));
}

void TestModelSession::savedSceneReopensTheModel() {
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

void TestModelSession::movedModelIsReported() {
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

void TestModelSession::changedModelIsReported() {
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

void TestModelSession::badFolderIsRefused() {
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

void TestModelSession::refusedIdsKeepTheRun() {
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

void TestModelSession::referenceRoundTrips() {
    ModelReference r;
    r.folder = QStringLiteral("/data/models/gpt2");
    r.fingerprint = QStringLiteral("gpt2 L2 H4/4 d32 hd8 V64 I128 #01234567");
    r.text = QStringLiteral("a \"quoted\" text");
    r.ids = {1, 2, 50000};
    r.attentionMask = {1, 1, 0};
    r.layer = 3;
    r.head = 7;
    const std::string view = withModelReference(R"({"mode":"all_heads"})", r);
    QVERIFY(view.find("all_heads") != std::string::npos);
    QCOMPARE(*modelReference(view), r);
    const std::string near = withFolderRelativeTo(view, QStringLiteral("/data/scenes/s.json"));
    QCOMPARE(modelReference(near)->folder, QStringLiteral("../models/gpt2"));
    QCOMPARE(*modelReference(withFolderResolvedFrom(near, QStringLiteral("/data/scenes/s.json"))),
             r);
    // Far away: absolute.
    const std::string far = withFolderRelativeTo(view, QStringLiteral("/home/a/b/c/s.json"));
    QCOMPARE(modelReference(far)->folder, r.folder);
    QVERIFY(!modelReference(R"({"mode":"all_heads"})"));
}

// Busy shows after the progress delay (0 here); Cancel drops the result when it comes.
void TestModelSession::cancelledOpeningLeavesTheWindowAsItWas() {
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

namespace {

// A test built-in model: a copy of a golden model named `name` under `root`, which
// AE_MODELS_PATH points at while this lives (a packager's extra folder; never resources/models).
struct TestBuiltIns {
    explicit TestBuiltIns(const QString& root) { qputenv("AE_MODELS_PATH", root.toLocal8Bit()); }
    ~TestBuiltIns() { qunsetenv("AE_MODELS_PATH"); }
};

void writeAbout(const QString& folder, const QByteArray& json) {
    QFile file(QDir(folder).filePath(QStringLiteral("about.json")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(json);
}

}  // namespace

void TestModelSession::builtInModelOpensByName() {
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

void TestModelSession::builtInSceneReopensByNameElsewhere() {
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

void TestModelSession::builtInSceneReportsAChangedOrMissingModel() {
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

void TestModelSession::builtInReferenceKeepsTheNameOnly() {
    ModelReference r;
    r.folder = QStringLiteral("/usr/share/attention-explorer/models/tiny");
    r.builtIn = QStringLiteral("tiny");
    r.fingerprint = QStringLiteral("gpt2 L2");
    r.ids = {1, 2};
    const std::string view = withModelReference(R"({"mode":"all_heads"})", r);
    QCOMPARE(*modelReference(view), r);  // while open, both
    const std::string saved = withFolderRelativeTo(view, QStringLiteral("/usr/share/s.json"));
    ModelReference byName = r;
    byName.folder.clear();
    QCOMPARE(*modelReference(saved), byName);
    QVERIFY(saved.find("folder") == std::string::npos);
    QVERIFY(saved.find("all_heads") != std::string::npos);
    // Reading it back leaves the name to the session (no folder is made up from the file's).
    QCOMPARE(withFolderResolvedFrom(saved, QStringLiteral("/home/a/s.json")), saved);
    // A reference with a folder and no name is as before.
    ModelReference plain = r;
    plain.builtIn.clear();
    QVERIFY(withModelReference({}, plain).find("builtin") == std::string::npos);
}

void TestModelSession::keyValueCacheStatus_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("expected");
    // The layer: 2 (K and V) x its kv heads x head_dim numbers, in the window's float32. The
    // model: 2 x 2 layers x 2 kv heads x 8 = 64 numbers a token, 4 bytes each (F32) or 2 (BF16).
    QTest::newRow("llama-tiny-gqa")
        << "llama-tiny-gqa"
        << "KV cache 2 × 2 kv heads × 8 = 32 numbers/token/layer (128 B at float32); "
           "llama-tiny-gqa: 256 B/token";
    QTest::newRow("llama-tiny-bf16")
        << "llama-tiny-bf16"
        << "KV cache 2 × 2 kv heads × 8 = 32 numbers/token/layer (128 B at float32); "
           "llama-tiny-bf16: 128 B/token";
    // gpt2-tiny: 4 heads of 8, every head its own K and V, 2 layers, F32: 2·2·4·8·4 = 512 B.
    QTest::newRow("gpt2-tiny")
        << "gpt2-tiny"
        << "KV cache 2 × 4 kv heads × 8 = 64 numbers/token/layer (256 B at float32); "
           "gpt2-tiny: 512 B/token";
}

void TestModelSession::keyValueCacheStatus() {
    QFETCH(QString, name);
    QFETCH(QString, expected);
    Opened o;
    QVERIFY(o.open(modelDir(name.toLatin1().constData())));
    QCOMPARE(ui::keyValueCacheStatus(o.document.scene(), o.session.model(), o.session.folder()),
             expected);
    // The layer's figure follows its kv heads; the model's stays the model's.
    if (o.document.scene().keyValueHeads() > 1) {
        QVERIFY(o.document.setKeyValueHeads(1));
        const QString status =
            ui::keyValueCacheStatus(o.document.scene(), o.session.model(), o.session.folder());
        QVERIFY2(status.startsWith(QStringLiteral("KV cache 2 × 1 kv head × 8 = 16 numbers")),
                 qPrintable(status));
        QVERIFY(status.endsWith(expected.mid(expected.indexOf(QLatin1Char(';')))));
    }
}

// Another number of kv heads in a model's layer flows through the later layers: the layer's
// record keeps its own grouping. Written out once per query head, the model's grouped K and V
// compute what the model does, so the later layers and the logits come back within float
// rounding while every head reads its own copy (a head read through the model's grouping would
// get another group's K). Pooled to one kv head, every head reads the same K and V, and the
// later layers and the predictions move.
void TestModelSession::keyValueHeadsWhatIfFlowsForward() {
    Opened o;
    QVERIFY(o.open(modelDir("llama-tiny-gqa")));
    QVERIFY(o.session.problemText().isEmpty());
    const RunF before = *o.session.currentRun();
    const model::Config& c = before.config;
    QVERIFY(c.kvHeads > 1 && c.kvHeads < c.heads);
    const int stepsBefore = o.document.undoStack()->index();

    QVERIFY(o.document.setKeyValueHeads(c.heads));
    o.settle();
    QVERIFY2(o.session.problemText().isEmpty(), qPrintable(o.session.problemText()));
    QVERIFY(o.session.currentRun() != o.session.baseRun());
    const RunF expanded = *o.session.currentRun();
    QCOMPARE(expanded.layers[0].keyValueHeads, c.heads);
    QCOMPARE(expanded.layers[0].key.cols(), static_cast<Eigen::Index>(c.heads) * c.headDim);
    for (int h = 0; h < c.heads; ++h) {
        QVERIFY2(largestDifference(expanded.k(0, h), before.k(0, h)) <= 1e-5,
                 qPrintable(QString::number(h)));
        QVERIFY(largestDifference(expanded.v(0, h), before.v(0, h)) <= 1e-5);
    }
    QVERIFY(outputDifference(expanded, before) <= 1e-4);
    QCOMPARE(expanded.layers[1].keyValueHeads, 0);  // later layers keep the model's grouping

    QVERIFY(o.document.setKeyValueHeads(1));
    o.settle();
    QVERIFY2(o.session.problemText().isEmpty(), qPrintable(o.session.problemText()));
    const RunF pooled = *o.session.currentRun();
    QCOMPARE(pooled.layers[0].keyValueHeads, 1);
    for (int h = 1; h < c.heads; ++h) {
        QVERIFY(identical(pooled.k(0, h), pooled.k(0, 0)));
        QVERIFY(identical(pooled.v(0, h), pooled.v(0, 0)));
    }
    QVERIFY(identical(pooled.layers[0].hiddenIn, before.layers[0].hiddenIn));
    QVERIFY(largestDifference(pooled.layers[1].hiddenIn, before.layers[1].hiddenIn) > 1e-5);
    QVERIFY(largestDifference(pooled.logits, before.logits) > 1e-5);
    QVERIFY(!o.session.changedHeads(0.01).empty());

    // Undo, twice: the model's own run again, to the very same numbers.
    QCOMPARE(o.document.undoStack()->index(), stepsBefore + 2);
    o.document.undoStack()->undo();
    o.document.undoStack()->undo();
    o.settle();
    QCOMPARE(o.session.currentRun(), o.session.baseRun());
    QVERIFY(sameRun(*o.session.currentRun(), before));
}

QTEST_MAIN(TestModelSession)
#include "test_model_session.moc"
