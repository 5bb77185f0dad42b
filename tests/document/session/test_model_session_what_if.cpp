// The open layer and its what-ifs (document/model_session.h, core/model/what_if.h): the explorer's
// engine on an opened head's layer computes what the model did; an edit of that layer flows
// through the later layers, undo brings the model's own numbers back, and a what-if's result
// that comes after its undo is dropped.

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

class TestModelSessionWhatIf : public QObject {
    Q_OBJECT
private slots:
    void openedHeadIsTheLayer_data();
    void openedHeadIsTheLayer();
    void whatIfFlowsForward();
    void whatIfInLaterLayerLeavesEarlierOnes();
    void undoWhileAWhatIfComputesShowsTheModel();
    void resumedRunMatchesTheModel();
    void ablationIsAWhatIf();
    void keyValueHeadsWhatIfFlowsForward();
    void fillMaskPredictionsFollowTheWhatIf();
};

void TestModelSessionWhatIf::openedHeadIsTheLayer_data() {
    QTest::addColumn<QString>("name");
    for (const char* name : {"gpt2-tiny", "bert-tiny", "llama-tiny-gqa", "qwen3-tiny"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

// The explorer's engine on the layer scene computes what the model computed in that layer.
void TestModelSessionWhatIf::openedHeadIsTheLayer() {
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

void TestModelSessionWhatIf::whatIfFlowsForward() {
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

void TestModelSessionWhatIf::whatIfInLaterLayerLeavesEarlierOnes() {
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
void TestModelSessionWhatIf::undoWhileAWhatIfComputesShowsTheModel() {
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
void TestModelSessionWhatIf::resumedRunMatchesTheModel() {
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

void TestModelSessionWhatIf::ablationIsAWhatIf() {
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

// Another number of kv heads in a model's layer flows through the later layers: the layer's
// record keeps its own grouping. Written out once per query head, the model's grouped K and V
// compute what the model does, so the later layers and the logits come back within float
// rounding while every head reads its own copy (a head read through the model's grouping would
// get another group's K). Pooled to one kv head, every head reads the same K and V, and the
// later layers and the predictions move.
void TestModelSessionWhatIf::keyValueHeadsWhatIfFlowsForward() {
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

// An encoder whose folder holds its masked-LM head predicts the token at a position (fill-mask):
// the analysis lists the head's ten most probable tokens there, and a what-if in its layer moves
// them, with the model's own list as the "before".
void TestModelSessionWhatIf::fillMaskPredictionsFollowTheWhatIf() {
    Opened o;
    QVERIFY(o.open(modelDir("bert-tiny-mlm")));
    const RunF before = *o.session.currentRun();
    QCOMPARE(before.maskedLmLogits.rows(), static_cast<Eigen::Index>(before.tokens.size()));
    const RunAnalysis own = o.session.analysis();
    // No tokenizer, so no [MASK] to go to: the last token, as a decoder's.
    QCOMPARE(own.position, static_cast<int>(before.tokens.size()) - 1);
    QCOMPARE(own.predictions.size(), std::size_t(10));
    Eigen::Index best = 0;
    before.maskedLmLogits.row(own.position).maxCoeff(&best);
    QCOMPARE(own.predictions.front().token, static_cast<long long>(best));
    QVERIFY(own.basePredictions.empty());
    o.session.setSelectedPosition(2);
    o.settle();
    QCOMPARE(o.session.analysis().position, 2);
    before.maskedLmLogits.row(2).maxCoeff(&best);
    QCOMPARE(o.session.analysis().predictions.front().token, static_cast<long long>(best));

    Scene ablated = o.document.scene();
    ablated.ablation.heads = {0, 1, 2};
    ablated.ablation.byMean = false;
    QVERIFY(o.document.replaceScene(ablated, QStringLiteral("Switch heads off")));
    o.settle();
    const RunAnalysis& whatIf = o.session.analysis();
    QVERIFY(largestDifference(o.session.currentRun()->maskedLmLogits, before.maskedLmLogits) >
            1e-4);
    QCOMPARE(whatIf.basePredictions.size(), std::size_t(10));
    QCOMPARE(whatIf.basePredictions.front().token, static_cast<long long>(best));
    QVERIFY(whatIf.predictions.front().probability != whatIf.basePredictions.front().probability);
}

QTEST_MAIN(TestModelSessionWhatIf)
#include "test_model_session_what_if.moc"
