// The tokens editor, driven through its models and controls as a user would, on the offscreen
// platform. Matrices are compared exactly: an undo must give back the same doubles. The weights
// editor is in test_weights_editor.
#include <QApplication>
#include <QCheckBox>
#include <QColor>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>
#include <limits>
#include <memory>
#include <sstream>

#include "core/init_draw.h"
#include "core/scene_edit.h"
#include "core/word_vectors.h"
#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "support/editor_checks.h"
#include "ui/editors/matrix_table.h"
#include "ui/editors/token_table_model.h"
#include "ui/editors/tokens_editor.h"
#include "ui/editors/weights_editor.h"

using namespace ae;
using namespace ae::ui;
using ae::test::sceneDifference;
using ae::test::verifyEngineMatchesRecompute;

class TestEditors : public QObject, private ae::test::EditorFixture {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();

    void splitSentence_data();
    void splitSentence();
    void knownTokensStayWhole();
    void parseNumberRefuses_data();
    void parseNumberRefuses();

    void editEmbeddingCell();
    void badEmbeddingTextRejected_data();
    void badEmbeddingTextRejected();
    void valueEditDoesNotResetView();
    void renameTokenIsUndoable();
    void sentenceKeepsVectors();
    void newWordSameVectorEverywhere();
    void repeatedWordHasOneVector();
    void savedRepeatedWordsLoadUnchanged();
    void tokenListKeepsPaddingSized();
    void paddingToggleMasksKey();
    void dModelChange_data();
    void dModelChange();
    void randomizeEmbeddingsFromSeed();
    void positionalAndNorm();
    void crossAttentionSource();
};

void TestEditors::initTestCase() {
    // Stable text metrics whatever the machine's default font.
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

void TestEditors::init() {
    setUp();
}

void TestEditors::cleanup() {
    tearDown();
}

// --- helpers -------------------------------------------------------------------------------------

void TestEditors::splitSentence_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("tokens");
    QTest::newRow("spaces") << "  the  cat\tsat " << QStringList{"the", "cat", "sat"};
    QTest::newRow("punctuation") << "Hello, world!" << QStringList{"Hello", ",", "world", "!"};
    QTest::newRow("apostrophe") << "don't" << QStringList{"don", "'", "t"};
    QTest::newRow("unicode") << QString::fromUtf8("café «noir»")
                             << QStringList{QString::fromUtf8("café"), QString::fromUtf8("«"),
                                            "noir", QString::fromUtf8("»")};
    QTest::newRow("symbol") << "a+b=c" << QStringList{"a", "+", "b", "=", "c"};
    QTest::newRow("underscore joins") << "word_1, x" << QStringList{"word_1", ",", "x"};
    QTest::newRow("empty") << "   " << QStringList{};
}

void TestEditors::splitSentence() {
    QFETCH(QString, text);
    QFETCH(QStringList, tokens);
    QCOMPARE(ui::splitSentence(text), tokens);
}

void TestEditors::knownTokensStayWhole() {
    const QStringList known{"[CLS]", "[SEP]"};
    QCOMPARE(ui::splitSentence("[CLS] hi! [SEP]", known),
             (QStringList{"[CLS]", "hi", "!", "[SEP]"}));
    QCOMPARE(ui::splitSentence("[CLS]x", known), (QStringList{"[", "CLS", "]", "x"}));
    // The sentence the field shows applies back unchanged.
    load("bert-base");
    const Scene before = document_->scene();
    auto* edit = child<QLineEdit>(tokens_.get(), "querySentenceEdit");
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(document_->scene().tokens, before.tokens);
    QVERIFY(document_->scene().embeddings == before.embeddings);
}

void TestEditors::parseNumberRefuses_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("accepted");
    QTest::addColumn<double>("value");
    QTest::newRow("plain") << "0.25" << true << 0.25;
    QTest::newRow("spaces") << " -3 " << true << -3.0;
    QTest::newRow("exponent") << "1e-3" << true << 1e-3;
    QTest::newRow("word") << "abc" << false << 0.0;
    QTest::newRow("nan") << "nan" << false << 0.0;
    QTest::newRow("inf") << "inf" << false << 0.0;
    QTest::newRow("-inf") << "-inf" << false << 0.0;
    QTest::newRow("overflow") << "1e400" << false << 0.0;
    QTest::newRow("beyond float") << "-1e39" << false << 0.0;
    QTest::newRow("float max") << "3e38" << true << 3e38;
    QTest::newRow("empty") << "" << false << 0.0;
}

void TestEditors::parseNumberRefuses() {
    QFETCH(QString, text);
    QFETCH(bool, accepted);
    QFETCH(double, value);
    double parsed = -99.0;
    QString error;
    QCOMPARE(parseNumber(QVariant(text), &parsed, &error), accepted);
    if (accepted) {
        QCOMPARE(parsed, value);
        QVERIFY(error.isEmpty());
    } else {
        QCOMPARE(parsed, -99.0);  // untouched
        QVERIFY(!error.isEmpty());
    }
}

// --- tokens editor -------------------------------------------------------------------------------

void TestEditors::editEmbeddingCell() {
    TokenTableModel* model = queryModel();
    const int column = model->firstValueColumn() + 2;
    const QModelIndex cell = model->index(1, column);
    const double old = document_->scene().embeddings(1, 2);
    QVERIFY(model->setData(cell, QStringLiteral("0.625")));
    QCOMPARE(document_->scene().embeddings(1, 2), 0.625);
    QCOMPARE(model->data(cell).toString(), QStringLiteral("0.625"));
    QCOMPARE(model->data(cell, Qt::EditRole).toString(), QStringLiteral("0.625"));
    verifyEngineMatchesRecompute(*document_);
    // Full precision in the editor and tooltip, three decimals on screen.
    QVERIFY(model->setData(cell, QStringLiteral("0.123456789")));
    QCOMPARE(model->data(cell).toString(), QStringLiteral("0.123"));
    QCOMPARE(model->data(cell, Qt::EditRole).toString().toDouble(), 0.123456789);
    QVERIFY(model->data(cell, Qt::ToolTipRole).toString().contains(QStringLiteral("0.123456789")));
    verifyEngineMatchesRecompute(*document_);
    document_->undoStack()->undo();
    document_->undoStack()->undo();
    QCOMPARE(document_->scene().embeddings(1, 2), old);
    QCOMPARE(model->data(cell, Qt::EditRole).toString().toDouble(), old);
}

void TestEditors::badEmbeddingTextRejected_data() {
    QTest::addColumn<QString>("text");
    QTest::newRow("word") << "abc";
    QTest::newRow("nan") << "nan";
    QTest::newRow("inf") << "inf";
    QTest::newRow("overflow") << "1e400";
    // Finite as a double, but beyond float, which the window computes in.
    QTest::newRow("beyond float") << "1e200";
    // Within float, but the scores overflow: the document refuses it.
    QTest::newRow("scores overflow") << "1e30";
}

void TestEditors::badEmbeddingTextRejected() {
    QFETCH(QString, text);
    TokenTableModel* model = queryModel();
    QSignalSpy messages(tokens_.get(), &TokensEditor::messageRequested);
    const Scene before = document_->scene();
    const int undoCount = document_->undoStack()->count();
    const QModelIndex cell = model->index(2, model->firstValueColumn());
    QVERIFY(!model->setData(cell, text));
    COMPARE_SCENES(document_->scene(), before);
    QCOMPARE(document_->undoStack()->count(), undoCount);
    QCOMPARE(model->data(cell, Qt::EditRole).toString().toDouble(), before.embeddings(2, 0));
    QVERIFY2(document_->errorText().isEmpty(), qPrintable(document_->errorText()));
    QCOMPARE(messages.count(), 1);
    auto* label = child<QLabel>(tokens_.get(), "messageLabel");
    QVERIFY(label->isVisibleTo(tokens_.get()));
    QVERIFY(!label->text().isEmpty());
    QCOMPARE(tokens_->message(), messages.first().first().toString());
    // The next good edit clears the message.
    QVERIFY(model->setData(cell, QStringLiteral("2")));
    QVERIFY(!label->isVisibleTo(tokens_.get()));
}

void TestEditors::valueEditDoesNotResetView() {
    TokenTableModel* model = queryModel();
    QSignalSpy resets(model, &QAbstractItemModel::modelReset);
    QSignalSpy changes(model, &QAbstractItemModel::dataChanged);
    const QModelIndex cell = model->index(0, model->firstValueColumn() + 1);
    QVERIFY(model->setData(cell, QStringLiteral("7")));
    QCOMPARE(resets.count(), 0);
    QVERIFY(changes.count() >= 1);
    bool cellSignalled = false;
    for (const QList<QVariant>& args : changes) {
        const auto tl = args[0].value<QModelIndex>(), br = args[1].value<QModelIndex>();
        QCOMPARE(tl, br);  // one cell, not the whole table
        cellSignalled = cellSignalled || tl == cell;
    }
    QVERIFY(cellSignalled);
    // A structural signal that changes nothing here (the head count) resets nothing either.
    document_->replaceScene(document_->scene(), QStringLiteral("same"));
    QCOMPARE(resets.count(), 0);
}

void TestEditors::renameTokenIsUndoable() {
    TokenTableModel* model = queryModel();
    const MatrixD embeddings = document_->scene().embeddings;
    QVERIFY(model->setData(model->index(1, TokenTableModel::kTextColumn), QStringLiteral("dog")));
    QCOMPARE(document_->scene().tokens[1], std::string("dog"));
    QVERIFY(document_->scene().embeddings == embeddings);  // a rename keeps the vector
    QVERIFY(!model->setData(model->index(1, TokenTableModel::kTextColumn), QStringLiteral("  ")));
    QCOMPARE(document_->scene().tokens[1], std::string("dog"));
    document_->undoStack()->undo();
    QCOMPARE(document_->scene().tokens[1], std::string("word_2"));
}

void TestEditors::sentenceKeepsVectors() {
    const Scene before = document_->scene();  // word_1 .. word_4
    auto* edit = child<QLineEdit>(tokens_.get(), "querySentenceEdit");
    edit->setText(QStringLiteral("word_3 cat word_1 word_3 ."));
    QTest::keyClick(edit, Qt::Key_Return);
    const Scene& after = document_->scene();
    QCOMPARE(after.tokens, (std::vector<std::string>{"word_3", "cat", "word_1", "word_3", "."}));
    QVERIFY(after.embeddings.row(0) == before.embeddings.row(2));
    QVERIFY(after.embeddings.row(1) == wordVector("cat", 3).transpose());
    QVERIFY(after.embeddings.row(2) == before.embeddings.row(0));
    // One vector per word: the second "word_3" takes the first one's, not a new one.
    QVERIFY(after.embeddings.row(3) == before.embeddings.row(2));
    QVERIFY(after.embeddings.row(4) == wordVector(".", 3).transpose());
    QCOMPARE(queryModel()->rowCount(), 5);
    verifyEngineMatchesRecompute(*document_);
    document_->undoStack()->undo();
    COMPARE_SCENES(document_->scene(), before);
}

void TestEditors::newWordSameVectorEverywhere() {
    auto typeSentence = [this](const QString& text) {
        auto* edit = child<QLineEdit>(tokens_.get(), "querySentenceEdit");
        edit->setText(text);
        child<QPushButton>(tokens_.get(), "querySentenceButton")->click();
    };
    typeSentence(QStringLiteral("the river bank"));
    const VectorD firstRun = document_->scene().embeddings.row(1).transpose();
    // A second run from scratch, and a different sentence around the same word.
    cleanup();
    init();
    typeSentence(QStringLiteral("the river bank"));
    QVERIFY(document_->scene().embeddings.row(1).transpose() == firstRun);
    cleanup();
    init();
    typeSentence(QStringLiteral("a boat on the river ."));
    QCOMPARE(document_->scene().tokens[4], std::string("river"));
    QVERIFY(document_->scene().embeddings.row(4).transpose() == firstRun);
}

void TestEditors::repeatedWordHasOneVector() {
    auto typeSentence = [this](const QString& text) {
        auto* edit = child<QLineEdit>(tokens_.get(), "querySentenceEdit");
        edit->setText(text);
        QTest::keyClick(edit, Qt::Key_Return);
    };
    typeSentence(QStringLiteral("the cat saw the dog"));
    const Scene scene = document_->scene();  // a copy: the next sentence replaces it
    QCOMPARE(scene.tokens, (std::vector<std::string>{"the", "cat", "saw", "the", "dog"}));
    const VectorD the = scene.embeddings.row(0).transpose();
    QVERIFY(scene.embeddings.row(3).transpose() == the);
    QVERIFY(the == wordVector("the", scene.dModel()));  // from the word's text alone
    for (int i : {1, 2, 4}) {
        QVERIFY2(scene.embeddings.row(i).transpose() != the, scene.tokens[i].c_str());
        for (int j : {1, 2, 4})
            QVERIFY(i == j || scene.embeddings.row(i) != scene.embeddings.row(j));
    }
    verifyEngineMatchesRecompute(*document_);

    // Another sentence around the same word keeps it; so does a save and reload.
    typeSentence(QStringLiteral("the dog and the bird"));
    QVERIFY(document_->scene().embeddings.row(0).transpose() == the);
    QVERIFY(document_->scene().embeddings.row(3).transpose() == the);
    QVERIFY(document_->scene().embeddings.row(1) == scene.embeddings.row(4));  // "dog"
    const Scene reloaded = io::parseScene(io::sceneToJson(document_->scene()));
    QVERIFY(reloaded.embeddings.row(0).transpose() == the);
    QVERIFY(reloaded.embeddings.row(3).transpose() == the);

    // From a fresh document too: the word's vector does not depend on what was there before.
    cleanup();
    init();
    typeSentence(QStringLiteral("a bird and the cat and the dog"));
    QVERIFY(document_->scene().embeddings.row(3).transpose() == the);
    QVERIFY(document_->scene().embeddings.row(6).transpose() == the);
}

void TestEditors::savedRepeatedWordsLoadUnchanged() {
    // A file written before one-vector-per-word, with two different "the" rows, loads as it was
    // saved, and re-applying its own sentence leaves it alone.
    Scene saved = document_->scene();
    saved.tokens = {"the", "cat", "the", "end"};
    saved.embeddings.row(2) = saved.embeddings.row(0) * -1.0;
    const Scene loaded = io::parseScene(io::sceneToJson(saved));
    QVERIFY(loaded.embeddings == saved.embeddings);
    document_->resetScene(loaded);
    auto* edit = child<QLineEdit>(tokens_.get(), "querySentenceEdit");
    QCOMPARE(edit->text(), QStringLiteral("the cat the end"));
    QTest::keyClick(edit, Qt::Key_Return);
    QVERIFY(document_->scene().embeddings == saved.embeddings);
    QCOMPARE(document_->undoStack()->count(), 0);
}

void TestEditors::tokenListKeepsPaddingSized() {
    TokenTableModel* model = queryModel();
    auto* view = child<QTableView>(tokens_.get(), "queryTable");
    QVERIFY(
        model->setData(model->index(1, model->paddingColumn()), Qt::Checked, Qt::CheckStateRole));
    QCOMPARE(document_->scene().mask.padding, (std::vector<bool>{false, true, false, false}));

    view->setCurrentIndex(model->index(1, 0));
    child<QPushButton>(tokens_.get(), "queryAddButton")->click();  // after the padded token
    QCOMPARE(document_->scene().tokens.size(), std::size_t(5));
    QCOMPARE(document_->scene().mask.padding,
             (std::vector<bool>{false, true, false, false, false}));
    QCOMPARE(view->currentIndex().row(), 2);  // the new token is selected
    verifyEngineMatchesRecompute(*document_);

    view->setCurrentIndex(model->index(1, 0));
    child<QPushButton>(tokens_.get(), "queryDownButton")->click();
    QCOMPARE(document_->scene().mask.padding,
             (std::vector<bool>{false, false, true, false, false}));
    QCOMPARE(document_->scene().tokens[2], std::string("word_2"));
    QCOMPARE(view->currentIndex().row(), 2);
    child<QPushButton>(tokens_.get(), "queryUpButton")->click();
    child<QPushButton>(tokens_.get(), "queryUpButton")->click();
    QCOMPARE(document_->scene().tokens[0], std::string("word_2"));
    QCOMPARE(document_->scene().mask.padding,
             (std::vector<bool>{true, false, false, false, false}));

    view->setCurrentIndex(model->index(0, 0));
    child<QPushButton>(tokens_.get(), "queryRemoveButton")->click();
    QCOMPARE(document_->scene().tokens.size(), std::size_t(4));
    QCOMPARE(document_->scene().mask.padding.size(), std::size_t(4));
    QCOMPARE(document_->scene().mask.padding, (std::vector<bool>{false, false, false, false}));
    verifyEngineMatchesRecompute(*document_);

    // The last token cannot go.
    for (int i = 0; i < 5; ++i) {
        view->setCurrentIndex(model->index(0, 0));
        child<QPushButton>(tokens_.get(), "queryRemoveButton")->click();
    }
    QCOMPARE(document_->scene().tokens.size(), std::size_t(1));
    QCOMPARE(document_->scene().mask.padding.size(), std::size_t(1));
    QVERIFY(!tokens_->message().isEmpty());
    verifyEngineMatchesRecompute(*document_);
}

void TestEditors::paddingToggleMasksKey() {
    TokenTableModel* model = queryModel();
    QSignalSpy resets(model, &QAbstractItemModel::modelReset);
    QVERIFY(
        model->setData(model->index(3, model->paddingColumn()), Qt::Checked, Qt::CheckStateRole));
    QCOMPARE(resets.count(), 0);
    QCOMPARE(model->data(model->index(3, model->paddingColumn()), Qt::CheckStateRole).toInt(),
             int(Qt::Checked));
    const AttentionEngine<float>& engine = document_->engine();
    for (int q = 0; q < 4; ++q) {
        QVERIFY(!engine.allowed()(q, 3));
        QCOMPARE(engine.weights(0)(q, 3), 0.0f);
    }
    document_->undoStack()->undo();
    QVERIFY(document_->engine().allowed().all());
}

void TestEditors::dModelChange_data() {
    QTest::addColumn<QString>("preset");
    QTest::addColumn<int>("width");
    QTest::newRow("four-words wider") << "four-words" << 5;
    QTest::newRow("four-words narrower") << "four-words" << 2;
    QTest::newRow("identity (d_proj follows)") << "identity" << 3;
    QTest::newRow("cross with W_O") << "cross" << 7;
    QTest::newRow("gpt2-style learned table") << "gpt2-style" << 11;
    QTest::newRow("bert-base drawn by init") << "bert-base" << 770;
}

void TestEditors::dModelChange() {
    QFETCH(QString, preset);
    QFETCH(int, width);
    load(preset.toLatin1().constData());
    const Scene before = document_->scene();
    const int oldWidth = before.dModel();
    child<QSpinBox>(tokens_.get(), "dModelSpin")->setValue(width);
    const Scene after = document_->scene();
    QCOMPARE(after.dModel(), width);
    verifyEngineMatchesRecompute(*document_);
    QCOMPARE(after.embeddings.rows(), before.embeddings.rows());
    const int kept = std::min(oldWidth, width);
    QVERIFY(after.embeddings.leftCols(kept) == before.embeddings.leftCols(kept));
    if (width > oldWidth) QVERIFY(after.embeddings.rightCols(width - oldWidth).isZero(0));
    if (after.projections.mode == ProjectionMode::Identity) {
        QCOMPARE(after.dProj(), width);
        QCOMPARE(after.dProj() % after.heads, 0);
    } else {
        QCOMPARE(after.projections.query.rows(), width);
        QCOMPARE(after.dProj(), before.dProj());
        QVERIFY(after.projections.query.topRows(kept) == before.projections.query.topRows(kept));
    }
    QCOMPARE(after.dOut(), before.dOut());
    if (after.positional.kind == PositionalKind::Learned) {
        QCOMPARE(after.positional.table.cols(), width);
        QVERIFY(after.positional.table.leftCols(kept) == before.positional.table.leftCols(kept));
    }
    if (after.hasSource) QCOMPARE(after.sourceEmbeddings.cols(), width);
    QVERIFY(!after.init);  // the drawn matrices changed: save them explicitly

    document_->undoStack()->undo();
    COMPARE_SCENES(document_->scene(), before);
    QCOMPARE(child<QSpinBox>(tokens_.get(), "dModelSpin")->value(), oldWidth);
    verifyEngineMatchesRecompute(*document_);
    document_->undoStack()->redo();
    COMPARE_SCENES(document_->scene(), after);
}

void TestEditors::randomizeEmbeddingsFromSeed() {
    child<QSpinBox>(tokens_.get(), "embeddingSeedSpin")->setValue(42);
    child<QPushButton>(tokens_.get(), "randomizeButton")->click();
    SplitMix64 rng(42);
    const MatrixD expected = drawMatrix(rng, InitSpec{}, 4, 3);
    QVERIFY(document_->scene().embeddings == expected);
    verifyEngineMatchesRecompute(*document_);
}

void TestEditors::positionalAndNorm() {
    auto* combo = child<QComboBox>(tokens_.get(), "positionalCombo");
    combo->setCurrentIndex(combo->findData(int(PositionalKind::Learned)));
    const Scene learned = document_->scene();
    QCOMPARE(learned.positional.kind, PositionalKind::Learned);
    QCOMPARE(learned.positional.table.rows(), 4);
    QCOMPARE(learned.positional.table.cols(), 3);
    QVERIFY(learned.positional.table == learnedPositionRows(0, 4, 3));
    verifyEngineMatchesRecompute(*document_);
    // The table is shown and editable while positions are learned.
    auto* tableView = child<QTableView>(tokens_.get(), "positionalTable");
    QVERIFY(tableView->isVisibleTo(tokens_.get()));
    QAbstractItemModel* table = tableView->model();
    QCOMPARE(table->rowCount(), 4);
    QVERIFY(table->setData(table->index(2, 1), QStringLiteral("0.75")));
    QCOMPARE(document_->scene().positional.table(2, 1), 0.75);
    verifyEngineMatchesRecompute(*document_);
    QVERIFY(!table->setData(table->index(2, 1), QStringLiteral("nan")));
    QCOMPARE(document_->scene().positional.table(2, 1), 0.75);
    document_->undoStack()->undo();
    QVERIFY(document_->scene().positional.table == learned.positional.table);
    // A fifth token grows the table with position 4's own row; the first four stay.
    child<QPushButton>(tokens_.get(), "queryAddButton")->click();
    QCOMPARE(document_->scene().positional.table.rows(), 5);
    QVERIFY(document_->scene().positional.table.topRows(4) == learned.positional.table);
    QVERIFY(document_->scene().positional.table.row(4) == learnedPositionRows(4, 1, 3));

    combo->setCurrentIndex(combo->findData(int(PositionalKind::Sinusoidal)));
    QCOMPARE(document_->scene().positional.kind, PositionalKind::Sinusoidal);
    QVERIFY(!tableView->isVisibleTo(tokens_.get()));
    auto* base = child<QDoubleSpinBox>(tokens_.get(), "positionalBaseSpin");
    QVERIFY(base->isEnabled());
    base->setValue(100.0);
    QCOMPARE(document_->scene().positional.base, 100.0);

    child<QCheckBox>(tokens_.get(), "layerNormCheck")->setChecked(true);
    QVERIFY(document_->scene().norm.enabled);
    QCOMPARE(document_->scene().norm.weight.size(), 3);
    verifyEngineMatchesRecompute(*document_);
    // Undo steps back one change at a time, and the controls follow.
    document_->undoStack()->undo();
    QVERIFY(!document_->scene().norm.enabled);
    QVERIFY(!child<QCheckBox>(tokens_.get(), "layerNormCheck")->isChecked());
}

void TestEditors::crossAttentionSource() {
    const Scene before = document_->scene();
    auto* cross = child<QCheckBox>(tokens_.get(), "crossAttentionCheck");
    auto* sourceTable = child<QTableView>(tokens_.get(), "sourceTable");
    QVERIFY(!sourceTable->isVisibleTo(tokens_.get()));
    cross->setChecked(true);
    const Scene& scene = document_->scene();
    QVERIFY(scene.hasSource);
    QCOMPARE(scene.sourceTokens, scene.tokens);
    QVERIFY(sourceTable->isVisibleTo(tokens_.get()));
    verifyEngineMatchesRecompute(*document_);

    // Padding belongs to the keys, now the source; the queries lose their check boxes.
    auto* source = qobject_cast<TokenTableModel*>(sourceTable->model());
    QCOMPARE(queryModel()->paddingColumn(), -1);
    QVERIFY(source->paddingColumn() >= 0);
    QVERIFY(source->setData(source->index(0, source->firstValueColumn()), QStringLiteral("9")));
    QCOMPARE(document_->scene().sourceEmbeddings(0, 0), 9.0);
    QCOMPARE(document_->scene().embeddings(0, 0), before.embeddings(0, 0));
    auto* edit = child<QLineEdit>(tokens_.get(), "sourceSentenceEdit");
    edit->setText(QStringLiteral("le chat word_2"));
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(document_->scene().sourceTokens.size(), std::size_t(3));
    QCOMPARE(document_->scene().tokens.size(), std::size_t(4));
    QVERIFY(document_->scene().sourceEmbeddings.row(2) == before.embeddings.row(1));
    QVERIFY(source->setData(source->index(2, source->paddingColumn()), Qt::Checked,
                            Qt::CheckStateRole));
    QCOMPARE(document_->scene().mask.padding, (std::vector<bool>{false, false, true}));
    verifyEngineMatchesRecompute(*document_);

    cross->setChecked(false);
    QVERIFY(!document_->scene().hasSource);
    QCOMPARE(document_->scene().mask.padding.size(), std::size_t(4));
    verifyEngineMatchesRecompute(*document_);
    while (document_->undoStack()->canUndo())
        document_->undoStack()->undo();
    COMPARE_SCENES(document_->scene(), before);
}

QTEST_MAIN(TestEditors)
#include "test_editors.moc"
