// An encoder–decoder model in the window: opening one (tiny-translate, the Marian model trained by
// scripts/train_tiny_translate.py that ships in resources/models) translates its default sentence
// token by token and shows the Translation tab (three grids, the alignment, the next token) and its
// input dock; the explorer holds a cross-attention layer as a cross scene; a typed target runs
// teacher forced; a head double-clicked in a grid opens in the explorer; what-ifs in encoder,
// decoder and cross layers flow forward as the core computes them, and undo brings back the model's
// own run, and the earlier input, exactly.

#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

#include "core/attention_engine.h"
#include "core/model/model_analysis.h"
#include "core/model/model_layer_scene.h"
#include "document/attention_document.h"
#include "document/translation_session.h"
#include "io/model/builtin_models.h"
#include "io/model/model_folder.h"
#include "io/model/seq2seq_input.h"
#include "io/tokenizer/tokenizer.h"
#include "plot/effect_map.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"
#include "plot/heatmap_grid.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "support/model_window_fixture.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/files/map_export.h"
#include "ui/window/main_window.h"
#include "ui/window/model_panel.h"
#include "ui/window/translation_panel.h"
#include "ui/window/translation_view.h"

using namespace ae;
using namespace ae::document;
using model::AttentionKind;

namespace {

QString tinyTranslate() {
    return QStringLiteral(AE_SHIPPED_MODELS_DIR "/tiny-translate");
}

double largestDifference(const model::Matrix<float>& a, const model::Matrix<float>& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return 1e30;
    return static_cast<double>((a - b).cwiseAbs().maxCoeff());
}

}  // namespace

class TestTranslationWindow : public QObject, public test::ModelWindowFixture {
    Q_OBJECT

private slots:
    void initTestCase() { test::startModelWindowTests(QStringLiteral("test_translation_window")); }
    void init() {
        openWindow();
        translation()->setProgressDelay(0);
    }
    void cleanup() { closeWindow(); }

    void opensAndTranslatesTokenByToken();
    void cancelKeepsTheTokensMadeSoFar();
    void typedTargetRunsTeacherForced();
    void headOpensInTheExplorer();
    void whatIfsFlowForwardAndUndoRestores();
    void undoBringsTheEarlierInputBack();
    void walkthroughNamesTargetAndSource();
    void builtInOpensByName();
    void folderWithoutTokenizerIsRefused();
    void oneStackModelReplacesIt();

private:
    TranslationSession* translation() const { return window_->translationSession(); }
    ui::TranslationPanel* panel() const { return window_->translationPanel(); }
    ui::TranslationView* view() const { return window_->translationView(); }
    void settleAll() {
        for (int i = 0; i < 4; ++i) {
            settle();
            translation()->waitUntilIdle();
            window_->document()->waitForResults();
            QCoreApplication::processEvents();
        }
    }
    void openTranslation(QSignalSpy* steps = nullptr) {
        QVERIFY(window_->fileActions()->openModel(tinyTranslate()));
        settleAll();
        QVERIFY2(translation()->isOpen(), qPrintable(translation()->problemText()));
        if (steps) QVERIFY(steps->count() > 0);
    }
    // The document's scene with W_V and its bias doubled, as one undo step.
    void doubleValueWeights() {
        Scene scene = window_->document()->scene();
        scene.projections.value *= 2.0;
        scene.projections.valueBias *= 2.0;
        QString error;
        QVERIFY2(window_->document()->replaceScene(scene, QStringLiteral("W_V × 2"), &error),
                 qPrintable(error));
        settleAll();
    }
    // What the core gives for the document's scene put in place of `kind`'s layer `layer`.
    model::EncoderDecoderRun<float> resumedByTheCore(AttentionKind kind, int layer) {
        const Scene& scene = window_->document()->scene();
        AttentionEngine<float> engine(scene);
        engine.compute();
        model::EditedLayer<float> edited = model::editedLayer(
            scene, engine, layer,
            (kind == AttentionKind::EncoderSelf ? translation()->model()->config
                                                : translation()->model()->decoder->config)
                .kvHeads);
        return model::resumeEncoderDecoder<float>(*translation()->model(),
                                                  *translation()->baseRun(), kind, layer,
                                                  std::move(edited.record), edited.attentionOut);
    }
};

void TestTranslationWindow::opensAndTranslatesTokenByToken() {
    QSignalSpy steps(translation(), &TranslationSession::translationStep);
    openTranslation(&steps);
    // The translation, as greedy decoding in the core makes it on the same source ids.
    const io::ModelFolder folder(tinyTranslate());
    const io::Tokenizer tokenizer = io::Tokenizer::load(tinyTranslate());
    std::vector<long long> source;
    for (int id : tokenizer.encode(QStringLiteral("the red cat sees a big dog")))
        source.push_back(id);
    QCOMPARE(translation()->sourceIds(), source);
    std::vector<long long> produced = model::generateGreedy<float>(folder.model(), source, 48);
    QCOMPARE(produced.back(), folder.model().config.eosToken);
    // Each token showed as it came: one step a token, each one longer.
    QCOMPARE(steps.count(), static_cast<int>(produced.size()) - 1);
    for (int i = 0; i < steps.count(); ++i)
        QCOMPARE(steps[i].first().value<std::vector<long long>>().size(),
                 static_cast<std::size_t>(i) + 2);
    produced.pop_back();  // the end token is what the last row predicts
    QCOMPARE(translation()->decoderIds(), produced);
    QCOMPARE(panel()->targetField()->text(), QStringLiteral("le chat rouge voit un chien grand"));
    QVERIFY2(panel()->tokensText().contains(QStringLiteral(" chat ·  rouge")),
             qPrintable(panel()->tokensText()));

    // The Translation tab in front, the one-stack model's tabs and dock hidden.
    QTabWidget* tabs = window_->centralTabs();
    QCOMPARE(tabs->currentWidget(), view());
    QVERIFY(tabs->indexOf(view()) >= 0);
    QCOMPARE(tabs->indexOf(window_->modelView()), -1);
    QVERIFY(panel()->isVisibleTo(window_.get()));
    QVERIFY(!window_->modelPanel()->isVisibleTo(window_.get()));
    // Still a projector's window: the tab and the input dock fit 1024 pixels.
    QVERIFY2(window_->minimumSizeHint().width() <= 1024,
             qPrintable(QString::number(window_->minimumSizeHint().width())));

    // The grids: cross-attention maps of target rows and source columns, each stack's own.
    const auto run = translation()->currentRun();
    plot::HeadGrid* cross = view()->grid(AttentionKind::Cross);
    QVERIFY(cross->showsCrossAttention());
    QCOMPARE(cross->layers(), 2);
    QCOMPARE(cross->heads(), 4);
    QCOMPARE(cross->poolShape().shownRows, static_cast<int>(produced.size()));
    QCOMPARE(cross->poolShape().shownColumns, static_cast<int>(source.size()));
    QCOMPARE(view()->grid(AttentionKind::EncoderSelf)->poolShape().shownRows,
             static_cast<int>(source.size()));
    QVERIFY(cross->summaryOf({1, 2}).entropy > 0);
    // The alignment: every layer's mean by default, rows labelled by the word each produces.
    const Eigen::MatrixXd expected = model::crossAttentionAlignment(run->decoder, -1, -1);
    plot::EffectMap* alignment = view()->alignment();
    QCOMPARE(alignment->rows(), static_cast<int>(produced.size()));
    QCOMPARE(alignment->columns(), static_cast<int>(source.size()));
    for (int r = 0; r < alignment->rows(); ++r)
        for (int c = 0; c < alignment->columns(); ++c)
            QVERIFY(std::abs(alignment->value(r, c) - expected(r, c)) < 1e-12);
    QCOMPARE(alignment->title(), QStringLiteral("Cross-attention, mean of 2 layers × 4 heads"));
    // One head: layer 0 head 0 is the alignment head: "rouge" (row 2) reads "red" (column 1).
    view()->setAlignment(ui::TranslationView::Alignment::Head);
    QCOMPARE(alignment->title(), QStringLiteral("Cross-attention of layer 0, head 0"));
    int best = 0;
    for (int c = 1; c < alignment->columns(); ++c)
        if (alignment->value(2, c) > alignment->value(2, best)) best = c;
    QCOMPARE(best, 1);
    // The alignment exports as a figure and as its numbers, as every labelled map does.
    QTemporaryDir exports;
    QCOMPARE(ui::saveMapFile(*alignment, exports.filePath(QStringLiteral("alignment.png"))),
             QString());
    QVERIFY(QImage(exports.filePath(QStringLiteral("alignment.png"))).width() >= 640);
    QCOMPARE(ui::saveMapFile(*alignment, exports.filePath(QStringLiteral("alignment.csv"))),
             QString());
    QFile csv(exports.filePath(QStringLiteral("alignment.csv")));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    QCOMPARE(csv.readAll().trimmed().split('\n').size(), alignment->rows());
    // The summaries of the grid in front: cross heads first, then the encoder's when its tab is.
    QCOMPARE(view()->summaryModel()->rowCount(), 8);
    QCOMPARE(view()->summaryModel()->summary(6).entropy,
             translation()->summaries(AttentionKind::Cross)[6].entropy);
    view()->grids()->setCurrentWidget(view()->grid(AttentionKind::EncoderSelf));
    QCOMPARE(view()->summaryModel()->summary(6).entropy,
             translation()->summaries(AttentionKind::EncoderSelf)[6].entropy);
    view()->grids()->setCurrentWidget(cross);
    // On a projector the table gives its height to the maps.
    view()->setPresentation(true);
    QVERIFY(!view()->summaryTable()->isVisibleTo(view()));
    view()->setPresentation(false);
    QVERIFY(view()->summaryTable()->isVisibleTo(view()));
    // The next token after the target: the end of the sentence.
    QTableWidget* predictions = view()->predictions()->table();
    QVERIFY(predictions->rowCount() > 0);
    QVERIFY2(predictions->item(0, 0)->text().contains(QStringLiteral("</s>")),
             qPrintable(predictions->item(0, 0)->text()));

    // The explorer holds layer 0's cross-attention as a cross scene, as the model has it.
    const Scene& scene = window_->document()->scene();
    QVERIFY(scene.hasSource);
    QCOMPARE(static_cast<int>(scene.queryCount()), static_cast<int>(produced.size()));
    QCOMPARE(static_cast<int>(scene.keyCount()), static_cast<int>(source.size()));
    const std::optional<TranslationLayer> open = translationLayer(scene.viewJson);
    QVERIFY(open);
    QCOMPARE(open->kind, AttentionKind::Cross);
    QCOMPARE(open->layer, 0);
    const AttentionEngine<float>& engine = window_->document()->engine();
    for (int h = 0; h < 4; ++h)
        QVERIFY(largestDifference(engine.weights(h), run->decoder.layers[0].cross.weights[h]) <
                1e-5);
    QVERIFY(!window_->document()->isModified());
}

void TestTranslationWindow::cancelKeepsTheTokensMadeSoFar() {
    openTranslation();
    const std::vector<long long> whole = translation()->decoderIds();
    QVERIFY(whole.size() > 4);
    // Each token waits 200 ms: Cancel, pressed when the second token shows, stops there (or, on
    // a machine so busy that the window saw it late, after the token under way).
    translation()->setTokenPause(200);
    QSignalSpy steps(translation(), &TranslationSession::translationStep);
    connect(translation(), &TranslationSession::translationStep, this,
            [this](const std::vector<long long>& ids) {
                QVERIFY(panel()->cancelButton()->isEnabled());
                if (ids.size() == 3) panel()->cancelButton()->click();
            });
    panel()->translateButton()->click();
    settleAll();
    QVERIFY(steps.count() >= 2);
    // The run is on what was made: the start token and the translation's first tokens.
    const std::vector<long long> made = translation()->decoderIds();
    QVERIFY2(made.size() >= 3 && made.size() < whole.size(),
             qPrintable(QString::number(made.size())));
    QVERIFY(std::equal(made.begin(), made.end(), whole.begin()));
    QCOMPARE(translation()->currentRun()->decoder.tokens, made);
    QCOMPARE(static_cast<std::size_t>(window_->document()->scene().queryCount()), made.size());
    QVERIFY(panel()->targetField()->text().startsWith(QStringLiteral("le chat")));
    QVERIFY(!panel()->cancelButton()->isEnabled());
}

void TestTranslationWindow::typedTargetRunsTeacherForced() {
    openTranslation();
    QLineEdit* target = panel()->targetField();
    target->setText(QStringLiteral("le chat voit un chien"));
    emit target->returnPressed();
    settleAll();
    QVERIFY(!translation()->translated());
    const io::Tokenizer tokenizer = io::Tokenizer::loadTarget(tinyTranslate());
    const io::ModelFolder folder(tinyTranslate());
    const std::vector<long long> ids = io::teacherForcedDecoderIds(
        tokenizer, QStringLiteral("le chat voit un chien"), folder.model().config);
    QCOMPARE(translation()->decoderIds(), ids);
    const model::EncoderDecoderRun<float> expected =
        model::runEncoderDecoder<float>(folder.model(), translation()->sourceIds(), ids);
    QVERIFY(translation()->currentRun()->decoder.logits == expected.decoder.logits);
    // The explorer's layer follows the new input: queries are the typed target's tokens.
    QCOMPARE(static_cast<std::size_t>(window_->document()->scene().queryCount()), ids.size());
    // A source edit keeps the typed target, run teacher forced on the new source.
    panel()->sourceField()->setText(QStringLiteral("the cat sees a dog"));
    emit panel()->sourceField()->textEdited(panel()->sourceField()->text());
    settleAll();
    QCOMPARE(translation()->decoderIds(), ids);
    QCOMPARE(
        translation()->currentRun()->encoder.tokens.size(),
        static_cast<std::size_t>(tokenizer.encode(QStringLiteral("the cat sees a dog")).size()));
    // Translate makes one again.
    panel()->translateButton()->click();
    settleAll();
    QVERIFY(translation()->translated());
    QCOMPARE(panel()->targetField()->text(), QStringLiteral("le chat voit un chien"));
}

void TestTranslationWindow::headOpensInTheExplorer() {
    openTranslation();
    QUndoStack* undo = window_->document()->undoStack();
    const int steps = undo->count();
    emit view()->grid(AttentionKind::EncoderSelf)->headActivated(1, 2);
    settleAll();
    QCOMPARE(window_->centralTabs()->currentWidget(), static_cast<QWidget*>(window_->grid()));
    const Scene& scene = window_->document()->scene();
    QVERIFY(!scene.hasSource);
    QCOMPARE(static_cast<std::size_t>(scene.queryCount()), translation()->sourceIds().size());
    QCOMPARE(translationLayer(scene.viewJson)->kind, AttentionKind::EncoderSelf);
    QCOMPARE(translation()->openLayer()->head, 2);
    const auto run = translation()->currentRun();
    QVERIFY(largestDifference(window_->document()->engine().weights(2),
                              run->encoder.layers[1].weights[2]) < 1e-5);
    QCOMPARE(undo->count(), steps + 1);
    // The decoder's own self-attention, then undo twice: the cross scene is back.
    emit view()->grid(AttentionKind::DecoderSelf)->headActivated(0, 1);
    settleAll();
    QCOMPARE(translationLayer(window_->document()->scene().viewJson)->kind,
             AttentionKind::DecoderSelf);
    QVERIFY(window_->document()->scene().mask.causal);
    undo->undo();
    undo->undo();
    settleAll();
    QCOMPARE(translationLayer(window_->document()->scene().viewJson)->kind, AttentionKind::Cross);
    QCOMPARE(translation()->openLayer()->kind, AttentionKind::Cross);
    QVERIFY(translation()->currentRun() == translation()->baseRun());
}

void TestTranslationWindow::whatIfsFlowForwardAndUndoRestores() {
    openTranslation();
    const auto base = translation()->baseRun();
    const model::Matrix<float> baseLogits = base->decoder.logits;
    QUndoStack* undo = window_->document()->undoStack();
    const struct {
        AttentionKind kind;
        int layer;
        plot::HeadId changedCross;  // a cross head the edit must move
    } cases[] = {{AttentionKind::Cross, 0, {1, 0}},
                 {AttentionKind::EncoderSelf, 0, {0, 0}},
                 {AttentionKind::DecoderSelf, 1, {1, 0}}};
    for (const auto& c : cases) {
        translation()->openHead(c.kind, c.layer, 0);
        settleAll();
        QVERIFY(translation()->currentRun() == base);
        doubleValueWeights();
        const auto current = translation()->currentRun();
        QVERIFY2(current != base, qPrintable(translation()->problemText()));
        QVERIFY(translation()->showsWhatIf());
        // The window's run is the core's resume of that scene, bit for bit.
        const model::EncoderDecoderRun<float> expected = resumedByTheCore(c.kind, c.layer);
        QVERIFY(current->decoder.logits == expected.decoder.logits);
        QVERIFY(current->encoder.lastHidden == expected.encoder.lastHidden);
        QVERIFY(largestDifference(current->decoder.logits, baseLogits) > 1e-3);
        // Predictions before → after, and the heads it moved marked.
        QVERIFY(!translation()->basePredictions().empty());
        QCOMPARE(view()->predictions()->table()->columnCount(),
                 static_cast<int>(plot::PredictionsPanel::ColumnCount));
        if (c.kind != AttentionKind::DecoderSelf || c.changedCross.first > c.layer) {
            QVERIFY(largestDifference(current->decoder.layers[c.changedCross.first]
                                          .cross.weights[c.changedCross.second],
                                      base->decoder.layers[c.changedCross.first]
                                          .cross.weights[c.changedCross.second]) > 0 ||
                    c.kind == AttentionKind::Cross);
        }
        // Undo: the model's own run again, the very same numbers.
        undo->undo();
        settleAll();
        QVERIFY(translation()->currentRun() == base);
        QVERIFY(translation()->currentRun()->decoder.logits == baseLogits);
        QVERIFY(translation()->basePredictions().empty());
    }
    // Translate again on the same source gives the same ids: the what-if stays, no undo step.
    doubleValueWeights();
    const int steps = undo->count();
    const auto whatIf = translation()->currentRun();
    QVERIFY(whatIf != base);
    panel()->translateButton()->click();
    settleAll();
    QCOMPARE(undo->count(), steps);
    QVERIFY(translation()->showsWhatIf());
    QVERIFY(translation()->currentRun()->decoder.logits == whatIf->decoder.logits);
}

void TestTranslationWindow::undoBringsTheEarlierInputBack() {
    openTranslation();
    const std::vector<long long> firstSource = translation()->sourceIds();
    const std::vector<long long> firstTarget = translation()->decoderIds();
    panel()->sourceField()->setText(QStringLiteral("the dog sees a cat"));
    emit panel()->sourceField()->textEdited(panel()->sourceField()->text());
    settleAll();
    QVERIFY(translation()->sourceIds() != firstSource);
    QCOMPARE(panel()->targetField()->text(), QStringLiteral("le chien voit un chat"));
    window_->document()->undoStack()->undo();
    settleAll();
    QCOMPARE(translation()->sourceIds(), firstSource);
    QCOMPARE(translation()->decoderIds(), firstTarget);
    QCOMPARE(panel()->sourceField()->text(), QStringLiteral("the red cat sees a big dog"));
    QCOMPARE(translation()->baseRun()->encoder.tokens, firstSource);
    QVERIFY(translation()->currentRun() == translation()->baseRun());
}

void TestTranslationWindow::walkthroughNamesTargetAndSource() {
    auto* walkthrough = window_->findChild<ui::WalkthroughPanel*>();
    QVERIFY(walkthrough);
    walkthrough->setStep(static_cast<int>(ui::WalkStep::Key));
    walkthrough->refresh();
    QVERIFY(!walkthrough->explanationText().contains(QStringLiteral("translation model")));
    openTranslation();
    walkthrough->setStep(static_cast<int>(ui::WalkStep::Query));
    walkthrough->refresh();
    QVERIFY2(walkthrough->explanationText().contains(QStringLiteral("come from the <b>target</b>")),
             qPrintable(walkthrough->explanationText()));
    walkthrough->setStep(static_cast<int>(ui::WalkStep::Value));
    walkthrough->refresh();
    QVERIFY2(walkthrough->explanationText().contains(
                 QStringLiteral("the encoder's output on “the red cat sees a big dog &lt;/s&gt;”")),
             qPrintable(walkthrough->explanationText()));
    // The mix: the explorer's row 2 (“chat”, producing “rouge”) in head 0 reads “red” most.
    window_->grid()->setSelectedRow(2);
    walkthrough->setStep(static_cast<int>(ui::WalkStep::Mix));
    walkthrough->refresh();
    QVERIFY2(walkthrough->explanationText().contains(
                 QStringLiteral("output row 2 (“chat”) takes the most from source word “red”")),
             qPrintable(walkthrough->explanationText()));
}

void TestTranslationWindow::builtInOpensByName() {
    // As the gallery and File › Open built-in model open it: its about.json's sentence and head.
    qputenv("AE_MODELS_PATH", QByteArray(AE_SHIPPED_MODELS_DIR));
    const io::BuiltInAbout about =
        io::readBuiltInAbout(QStringLiteral(AE_SHIPPED_MODELS_DIR "/tiny-translate"));
    QVERIFY(window_->fileActions()->openModel(QStringLiteral("builtin:tiny-translate")));
    settleAll();
    qunsetenv("AE_MODELS_PATH");
    QVERIFY2(translation()->isOpen(), qPrintable(translation()->problemText()));
    QCOMPARE(translation()->location(), QStringLiteral("builtin:tiny-translate"));
    QCOMPARE(translation()->source(), about.text);
    const std::optional<TranslationLayer> open = translation()->openLayer();
    QVERIFY(open);
    QCOMPARE(open->kind, AttentionKind::Cross);
    QCOMPARE(open->layer, about.layer);
    QCOMPARE(open->head, about.head);
    QCOMPARE(panel()->targetField()->text(), QStringLiteral("le chat rouge voit un chien grand"));
}

void TestTranslationWindow::folderWithoutTokenizerIsRefused() {
    openModel();  // gpt2-tiny
    QVERIFY(session()->isOpen());
    QSignalSpy problems(translation(), &TranslationSession::problem);
    const QString bart = QStringLiteral(AE_TEST_DATA_DIR "/seq2seq-models/bart-tiny");
    QVERIFY(window_->fileActions()->openModel(bart));
    settleAll();
    QCOMPARE(problems.count(), 1);
    const QString message = problems.first().first().toString();
    QVERIFY2(message.startsWith(bart) && message.contains(QStringLiteral("tokenizer")) &&
                 message.contains(QStringLiteral("attention-explorer run")) &&
                 !message.contains(QLatin1Char('\n')),
             qPrintable(message));
    // The model open before stays, and works.
    QVERIFY(!translation()->isOpen());
    QVERIFY(session()->isOpen());
    QVERIFY(window_->centralTabs()->indexOf(window_->modelView()) >= 0);
}

void TestTranslationWindow::oneStackModelReplacesIt() {
    openTranslation();
    openModel();  // gpt2-tiny
    QVERIFY(!translation()->isOpen());
    QVERIFY(session()->isOpen());
    QTabWidget* tabs = window_->centralTabs();
    QVERIFY(tabs->indexOf(window_->modelView()) >= 0);
    QCOMPARE(tabs->indexOf(view()), -1);
    QVERIFY(!panel()->isVisibleTo(window_.get()));
    // And back: the translation opens over the one-stack model.
    openTranslation();
    QVERIFY(!session()->isOpen());
    QVERIFY(tabs->indexOf(view()) >= 0);
}

QTEST_MAIN(TestTranslationWindow)
#include "test_translation_window.moc"
