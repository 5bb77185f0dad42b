// An encoder in the window: a BERT-style masked-LM model with a WordPiece tokenizer (made here,
// random weights) opens; the Next token tab becomes Predictions, listing the ten tokens the
// masked-LM head finds most probable at the [MASK] that was typed; a sentence B runs the pair
// through the tokenizer's template, gives its tokens type 1 and marks them in the chips.
// With AE_SHOTS_DIR set, screenshots() saves the window at 1024x768 there, for docs/.
#include <QApplication>
#include <QDir>
#include <QLineEdit>
#include <QListWidget>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <memory>
#include <random>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/tokenizer/tokenizer.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"
#include "plot/model_panels.h"
#include "plot/model_view.h"
#include "support/safetensors_writer.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"
#include "ui/window/model_panel.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::testing;

namespace {

const QString kTokenizers = QStringLiteral(AE_TEST_DATA_DIR "/tokenizers/wordpiece");

// BertForMaskedLM's names, d 32, 2 layers of 4 heads, the tokenizer's 170 ids.
void writeMaskedLmModel(const QString& dir) {
    const long long V = 170, d = 32, I = 64, P = 64;
    std::mt19937 random(7);
    std::normal_distribution<double> normal(0.0, 0.3);
    auto matrix = [&](long long rows, long long cols) {
        MatrixD m(rows, cols);
        for (Eigen::Index k = 0; k < m.size(); ++k)
            m.data()[k] = normal(random);
        return m;
    };
    auto ones = [](long long n) { return MatrixD::Ones(1, n); };
    std::vector<TestTensor> t;
    auto add = [&](const QString& name, const MatrixD& m, std::vector<long long> shape) {
        t.push_back(tensor(name, m, "F32", std::move(shape)));
    };
    add("bert.embeddings.word_embeddings.weight", matrix(V, d), {V, d});
    add("bert.embeddings.position_embeddings.weight", matrix(P, d), {P, d});
    add("bert.embeddings.token_type_embeddings.weight", matrix(2, d), {2, d});
    add("bert.embeddings.LayerNorm.weight", ones(d), {d});
    add("bert.embeddings.LayerNorm.bias", matrix(1, d), {d});
    for (int l = 0; l < 2; ++l) {
        const QString p = QStringLiteral("bert.encoder.layer.%1.").arg(l);
        for (const char* name : {"attention.self.query", "attention.self.key",
                                 "attention.self.value", "attention.output.dense"}) {
            add(p + name + ".weight", matrix(d, d), {d, d});
            add(p + name + ".bias", matrix(1, d), {d});
        }
        add(p + "intermediate.dense.weight", matrix(I, d), {I, d});
        add(p + "intermediate.dense.bias", matrix(1, I), {I});
        add(p + "output.dense.weight", matrix(d, I), {d, I});
        add(p + "output.dense.bias", matrix(1, d), {d});
        for (const char* norm : {"attention.output.LayerNorm", "output.LayerNorm"}) {
            add(p + norm + ".weight", ones(d), {d});
            add(p + norm + ".bias", matrix(1, d), {d});
        }
    }
    add("cls.predictions.transform.dense.weight", matrix(d, d), {d, d});
    add("cls.predictions.transform.dense.bias", matrix(1, d), {d});
    add("cls.predictions.transform.LayerNorm.weight", ones(d), {d});
    add("cls.predictions.transform.LayerNorm.bias", matrix(1, d), {d});
    add("cls.predictions.bias", matrix(1, V), {V});
    QVERIFY(writeSafetensors(dir + "/model.safetensors", t));
    const QJsonObject config{
        {"model_type", "bert"},   {"architectures", QJsonArray{"BertForMaskedLM"}},
        {"vocab_size", V},        {"hidden_size", d},
        {"num_hidden_layers", 2}, {"num_attention_heads", 4},
        {"intermediate_size", I}, {"max_position_embeddings", P},
        {"type_vocab_size", 2},   {"hidden_act", "gelu"}};
    QVERIFY(writeBytes(dir + "/config.json", QJsonDocument(config).toJson()));
    for (const char* file : {"tokenizer.json", "tokenizer_config.json"})
        QVERIFY(QFile::copy(kTokenizers + "/" + file, dir + "/" + file));
}

}  // namespace

class TestEncoderWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void predictionsTabShowsFillMask();
    void sentencePairRunsWithTokenTypes();
    void screenshots();

private:
    void settle();
    void openDemo(const QString& text);
    ModelSession* session() const { return window_->modelSession(); }
    plot::PredictionsPanel* predictions() const {
        return window_->modelView()->findChild<plot::PredictionsPanel*>();
    }

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<MainWindow> window_;
};

void TestEncoderWindow::initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("attention-explorer-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_encoder_window"));
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

void TestEncoderWindow::init() {
    QSettings().clear();
    dir_ = std::make_unique<QTemporaryDir>();
    qputenv("AE_AUTOSAVE_DIR", dir_->filePath(QStringLiteral("autosave")).toLocal8Bit());
    QDir().mkpath(dir_->filePath("bert-mlm-demo"));
    writeMaskedLmModel(dir_->filePath("bert-mlm-demo"));
    window_ = std::make_unique<MainWindow>();
    window_->resize(1024, 768);
    window_->openPreset(QStringLiteral("default"));
    window_->show();
    session()->setProgressDelay(0);
    window_->fileActions()->setUnsavedQuestion(
        [](const QString&) { return UnsavedChoice::Discard; });
}

void TestEncoderWindow::cleanup() {
    window_.reset();
    dir_.reset();
}

void TestEncoderWindow::settle() {
    for (int i = 0; i < 6; ++i) {
        window_->document()->waitForResults();
        session()->waitUntilIdle();
        QCoreApplication::processEvents();
    }
}

void TestEncoderWindow::openDemo(const QString& text) {
    session()->open(dir_->filePath("bert-mlm-demo"), text);
    settle();
    QVERIFY2(session()->isOpen(), qPrintable(session()->problemText()));
    window_->centralTabs()->setCurrentWidget(window_->modelView());
    settle();
}

void TestEncoderWindow::predictionsTabShowsFillMask() {
    openDemo(QStringLiteral("the cat sat on the [MASK] ."));
    const auto run = session()->currentRun();
    QVERIFY(run);
    QCOMPARE(run->maskedLmLogits.rows(), static_cast<Eigen::Index>(run->tokens.size()));
    // The [MASK] the tokenizer made: where the predictions go without a click.
    const int mask = session()->tokenizer()->maskToken();
    QVERIFY(mask >= 0);
    const auto at = std::find(run->tokens.begin(), run->tokens.end(), mask);
    QVERIFY(at != run->tokens.end());
    const int position = static_cast<int>(at - run->tokens.begin());
    QCOMPARE(session()->analysis().position, position);
    auto* tabs = window_->modelView()->findChild<QTabWidget*>();
    QVERIFY(tabs);
    const int tab = tabs->indexOf(predictions());
    QVERIFY(tabs->isTabVisible(tab));
    QCOMPARE(tabs->tabText(tab), QStringLiteral("Predictions"));
    QVERIFY2(predictions()->heading().startsWith(
                 QStringLiteral("Most probable tokens at %1").arg(position)),
             qPrintable(predictions()->heading()));
    QCOMPARE(predictions()->table()->rowCount(), 10);
    QCOMPARE(predictions()->table()->horizontalHeaderItem(0)->text(), QStringLiteral("Token"));
    // The heads table's to-[SEP] score reads the [SEP] the tokenizer put at the end.
    const int separator = session()->tokenizer()->separatorToken();
    QCOMPARE(run->tokens.back(), static_cast<long long>(separator));
    const model::HeadSummary& first = session()->analysis().summaries.front();
    const auto& weights = run->layers[0].weights[0];
    QVERIFY(std::fabs(first.toSeparator - weights.col(weights.cols() - 1).cast<double>().sum() /
                                              weights.rows()) < 1e-6);
    QVERIFY(!window_->modelView()->summaryTable()->isColumnHidden(
        plot::HeadSummaryModel::scoreColumn("to_separator")));
    // The list is the head's: its first row the row's largest logit.
    Eigen::Index best = 0;
    run->maskedLmLogits.row(position).maxCoeff(&best);
    QCOMPARE(session()->analysis().predictions.front().token, static_cast<long long>(best));
}

void TestEncoderWindow::sentencePairRunsWithTokenTypes() {
    openDemo(QStringLiteral("the cat sat"));
    const std::size_t single = session()->ids().size();
    QCOMPARE(session()->pairStart(), -1);
    QVERIFY(window_->modelPanel()->textPairField()->isVisible());
    session()->setTextPair(QStringLiteral("the cat sat"), QStringLiteral("on the mat"));
    settle();
    const auto run = session()->currentRun();
    QVERIFY(session()->ids().size() > single);
    QCOMPARE(run->tokens, session()->ids());
    // [CLS] A [SEP] B [SEP]: B and its [SEP] of type 1, the boundary after the first [SEP].
    const std::vector<int>& types = run->options.tokenTypes;
    QCOMPARE(types.size(), run->tokens.size());
    const int start = session()->pairStart();
    QCOMPARE(static_cast<std::size_t>(start), single);
    for (std::size_t i = 0; i < types.size(); ++i)
        QCOMPARE(types[i], static_cast<int>(i) >= start ? 1 : 0);
    QCOMPARE(run->tokens[static_cast<std::size_t>(start) - 1], run->tokens.back());  // [SEP]
    // The chips mark sentence B.
    auto* chips = window_->modelPanel()->findChild<QListWidget*>(QStringLiteral("modelChips"));
    QVERIFY(chips);
    QCOMPARE(chips->count(), static_cast<int>(run->tokens.size()));
    // As drawn: inside the left edge of each chip (no text there), B's first chip has another
    // colour than A's [SEP] before it.
    const QImage drawn = chips->viewport()->grab().toImage();
    auto chipColour = [&](int item) {
        const QRect r = chips->visualItemRect(chips->item(item));
        return drawn.pixelColor(r.left() + 3, r.center().y());
    };
    QVERIFY2(chipColour(start - 1) != chipColour(start),
             qPrintable(chipColour(start - 1).name() + " " + chipColour(start).name()));
    QCOMPARE(chipColour(start), chipColour(start + 1));
    QVERIFY(chips->item(start)->toolTip().contains(QStringLiteral("sentence B")));
    // The model view's maps mark it too.
    auto* grid = window_->modelView()->findChild<plot::HeadGrid*>();
    QVERIFY(grid);
    QCOMPARE(grid->pairStart(), start);
    // Undo takes the pair back to the single sentence.
    window_->document()->undoStack()->undo();
    settle();
    QCOMPARE(session()->ids().size(), single);
    QCOMPARE(session()->pairStart(), -1);
    QCOMPARE(grid->pairStart(), -1);
}

// Not a check: docs/'s pictures, when AE_SHOTS_DIR names a folder.
void TestEncoderWindow::screenshots() {
    const QString dir = qEnvironmentVariable("AE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set AE_SHOTS_DIR to save the screenshots");
    window_->showNormal();
    window_->resize(1024, 768);
    openDemo(QStringLiteral("the cat sat on the [MASK] ."));
    window_->modelView()->findChild<QTabWidget*>()->setCurrentWidget(predictions());
    QTest::qWait(300);
    settle();
    QVERIFY(window_->grab().toImage().save(dir + "/encoder-fill-mask-1024x768.png"));
    session()->setTextPair(QStringLiteral("the cat sat on the [MASK] ."),
                           QStringLiteral("it was a nice mat"));
    settle();
    QTest::qWait(300);
    settle();
    QVERIFY(window_->grab().toImage().save(dir + "/encoder-pair-1024x768.png"));
    window_->modelView()->findChild<QTabWidget*>()->setCurrentIndex(0);  // Heads
    QTest::qWait(300);
    settle();
    QVERIFY(window_->grab().toImage().save(dir + "/encoder-heads-1024x768.png"));
}

QTEST_MAIN(TestEncoderWindow)
#include "test_encoder_window.moc"
