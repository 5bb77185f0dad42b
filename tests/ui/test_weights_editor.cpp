// The weights editor (projection tables, biases, modes, d_proj, output projection, re-roll) and
// undo across both editors, driven as a user would on the offscreen platform. Matrices are
// compared exactly: an undo must give back the same doubles.
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

class TestWeightsEditor : public QObject, private ae::test::EditorFixture {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();

    void weightCellEdit();
    void weightTablesShowHeadColumns();
    void badWeightTextRejected();
    void biasRow();
    void sharedModeShowsUsesQuery();
    void identityModeSetsDProj();
    void dProjChangeKeepsHeadsDividing();
    void outputProjectionToggle();
    void rerollSameSeedSameMatrices();
    void rerolledSceneSavesAndLoadsBack();
    void undoRedoRestoreExactly();
};

void TestWeightsEditor::initTestCase() {
    // Stable text metrics whatever the machine's default font.
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

void TestWeightsEditor::init() {
    setUp();
}

void TestWeightsEditor::cleanup() {
    tearDown();
}

// --- weights editor ------------------------------------------------------------------------------

void TestWeightsEditor::weightCellEdit() {
    auto* model =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_QTable")->model());
    QVERIFY(model);
    QCOMPARE(model->rowCount(), 3);
    QCOMPARE(model->columnCount(), 3);
    QSignalSpy resets(model, &QAbstractItemModel::modelReset);
    QVERIFY(model->setData(model->index(2, 1), QStringLiteral("-1.5")));
    QCOMPARE(document_->scene().projections.query(2, 1), -1.5);
    QCOMPARE(model->data(model->index(2, 1)).toString(), QStringLiteral("-1.500"));
    QCOMPARE(resets.count(), 0);
    verifyEngineMatchesRecompute(*document_);
    weights_->setDecimals(4);
    QCOMPARE(model->data(model->index(2, 1)).toString(), QStringLiteral("-1.5000"));
    document_->undoStack()->undo();
    QCOMPARE(model->data(model->index(2, 1), Qt::EditRole).toString().toDouble(),
             document_->scene().projections.query(2, 1));
}

void TestWeightsEditor::weightTablesShowHeadColumns() {
    load("default");
    const Scene& scene = document_->scene();
    const int heads = scene.heads;
    QVERIFY(heads >= 2);
    const int dHead = scene.dProj() / heads;
    auto* query =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_QTable")->model());
    QCOMPARE(query->columnCount(), scene.dProj());
    for (int c = 0; c < scene.dProj(); ++c) {
        const int head = c / dHead;
        QCOMPARE(query->headerData(c, Qt::Horizontal).toString(),
                 QStringLiteral("h%1 · %2").arg(head).arg(c));
        QCOMPARE(query->headOf(Qt::Horizontal, c), head);
        // Every other head is tinted, so the bands can be told apart at a glance.
        const QVariant background = query->data(query->index(0, c), Qt::BackgroundRole);
        if (head % 2 == 1)
            QCOMPARE(background.value<QColor>(), MatrixTableModel::headTint());
        else
            QVERIFY(!background.isValid());
    }
    QVERIFY(child<QLabel>(weights_.get(), "W_QNote")
                ->text()
                .contains(QStringLiteral("h1 = %1–%2").arg(dHead).arg(2 * dHead - 1)));
    // W_O: its rows are the heads' outputs.
    auto* output =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_OTable")->model());
    if (scene.projections.hasOutput) {
        QCOMPARE(output->headerData(dHead, Qt::Vertical).toString(),
                 QStringLiteral("h1 · %1").arg(dHead));
    }
    // Not a check: the editor as a class sees it, where AE_WEIGHTS_SHOT says.
    if (qEnvironmentVariableIsSet("AE_WEIGHTS_SHOT")) {
        weights_->resize(620, 420);
        weights_->show();
        QVERIFY(QTest::qWaitForWindowExposed(weights_.get()));
        weights_->grab().save(qEnvironmentVariable("AE_WEIGHTS_SHOT"));
        weights_->hide();
    }
    // A new head count relabels the columns (the numbers themselves do not change).
    QVERIFY(document_->setHeads(1));
    QCOMPARE(query->headerData(dHead, Qt::Horizontal).toString(), QString::number(dHead));
    QVERIFY(!query->data(query->index(0, dHead), Qt::BackgroundRole).isValid());
    QVERIFY(document_->setHeads(heads));
    QCOMPARE(query->headerData(dHead, Qt::Horizontal).toString(),
             QStringLiteral("h1 · %1").arg(dHead));

    // Twelve heads of 64 with one decimal: the numbers are narrow, "h11 · 767" is not, and it
    // still fits its column.
    load("bert-base");
    weights_->setDecimals(1);
    auto* view = child<QTableView>(weights_.get(), "W_QTable");
    const int lastColumn = document_->scene().dProj() - 1;
    const QString last = query->headerData(lastColumn, Qt::Horizontal).toString();
    QCOMPARE(last, QStringLiteral("h11 · 767"));
    QVERIFY(view->columnWidth(lastColumn) >=
            QFontMetrics(view->horizontalHeader()->font()).horizontalAdvance(last));
}

void TestWeightsEditor::badWeightTextRejected() {
    auto* model =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_VTable")->model());
    QSignalSpy messages(weights_.get(), &WeightsEditor::messageRequested);
    const Scene before = document_->scene();
    for (const char* text : {"abc", "nan", "inf", "1e400", "1e300"}) {
        QVERIFY2(!model->setData(model->index(0, 0), QString::fromLatin1(text)), text);
    }
    COMPARE_SCENES(document_->scene(), before);
    QCOMPARE(messages.count(), 5);
    QVERIFY(child<QLabel>(weights_.get(), "messageLabel")->isVisibleTo(weights_.get()));
    QVERIFY(!weights_->message().isEmpty());
    QCOMPARE(document_->undoStack()->count(), 0);
}

void TestWeightsEditor::biasRow() {
    auto* model =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_QTable")->model());
    auto* check = child<QCheckBox>(weights_.get(), "W_QBiasCheck");
    QVERIFY(!check->isChecked());
    check->setChecked(true);
    QCOMPARE(model->rowCount(), 4);
    QCOMPARE(model->headerData(3, Qt::Vertical).toString(), QStringLiteral("bias"));
    QVERIFY(model->setData(model->index(3, 2), QStringLiteral("0.5")));
    QCOMPARE(document_->scene().projections.queryBias(2), 0.5);
    verifyEngineMatchesRecompute(*document_);
    // Off sets the bias to zero (one undo step); undo brings it, and its row, back.
    check->setChecked(false);
    QVERIFY(document_->scene().projections.queryBias.isZero(0));
    QCOMPARE(model->rowCount(), 3);
    document_->undoStack()->undo();
    QCOMPARE(document_->scene().projections.queryBias(2), 0.5);
    QCOMPARE(model->rowCount(), 4);
    QVERIFY(check->isChecked());
}

void TestWeightsEditor::sharedModeShowsUsesQuery() {
    auto* mode = child<QComboBox>(weights_.get(), "projectionModeCombo");
    const MatrixD query = document_->scene().projections.query;
    child<QTabWidget>(weights_.get(), "weightTabs")->setCurrentIndex(1);
    mode->setCurrentIndex(mode->findData(int(ProjectionMode::SharedQK)));
    QCOMPARE(document_->scene().projections.mode, ProjectionMode::SharedQK);
    QVERIFY(document_->scene().projections.query == query);
    QVERIFY(!child<QTableView>(weights_.get(), "W_KTable")->isVisibleTo(weights_.get()));
    QVERIFY(child<QLabel>(weights_.get(), "W_KNote")->text().contains(QStringLiteral("uses W_Q")));
    verifyEngineMatchesRecompute(*document_);
    // Back to separate: W_K starts as a copy of W_Q, so keys are unchanged.
    mode->setCurrentIndex(mode->findData(int(ProjectionMode::Separate)));
    QVERIFY(document_->scene().projections.key == query);
    auto* tabs = child<QTabWidget>(weights_.get(), "weightTabs");
    tabs->setCurrentIndex(1);
    QVERIFY(child<QTableView>(weights_.get(), "W_KTable")->isVisibleTo(weights_.get()));
}

void TestWeightsEditor::identityModeSetsDProj() {
    load("tutorial-variant");  // d_model 8, d_proj 8, 4 heads, W_O
    child<QSpinBox>(weights_.get(), "dProjSpin")->setValue(6);
    QCOMPARE(document_->scene().dProj(), 6);
    QCOMPARE(document_->scene().heads, 3);  // 4 does not divide 6
    QCOMPARE(document_->scene().projections.output.rows(), 6);
    auto* mode = child<QComboBox>(weights_.get(), "projectionModeCombo");
    mode->setCurrentIndex(mode->findData(int(ProjectionMode::Identity)));
    const Scene& scene = document_->scene();
    QCOMPARE(scene.projections.mode, ProjectionMode::Identity);
    QCOMPARE(scene.dProj(), scene.dModel());
    QCOMPARE(scene.projections.output.rows(), scene.dModel());
    QCOMPARE(scene.dProj() % scene.heads, 0);
    verifyEngineMatchesRecompute(*document_);
    auto* tabs = child<QTabWidget>(weights_.get(), "weightTabs");
    QVERIFY(!tabs->isTabVisible(0) && !tabs->isTabVisible(1) && !tabs->isTabVisible(2));
    QVERIFY(tabs->isTabVisible(3));  // W_O stays
    auto* note = child<QLabel>(weights_.get(), "identityNote");
    QVERIFY(note->isVisibleTo(weights_.get()));
    QVERIFY(note->text().contains(QStringLiteral("Q = K = V = X")));
    QVERIFY(!child<QSpinBox>(weights_.get(), "dProjSpin")->isEnabled());
    // Leaving identity starts from identity matrices: the attention weights do not move.
    const MatrixD weights = document_->engine().weights(0).cast<double>();
    mode->setCurrentIndex(mode->findData(int(ProjectionMode::Separate)));
    QVERIFY(document_->scene().projections.query == MatrixD::Identity(8, 8));
    QVERIFY((document_->engine().weights(0).cast<double>() - weights).cwiseAbs().maxCoeff() < 1e-6);
    QVERIFY(tabs->isTabVisible(0));
}

void TestWeightsEditor::dProjChangeKeepsHeadsDividing() {
    load("cross");  // d_proj 6, 2 heads
    document_->setHeads(3);
    QCOMPARE(document_->scene().heads, 3);
    const Scene before = document_->scene();
    child<QSpinBox>(weights_.get(), "dProjSpin")->setValue(4);
    QCOMPARE(document_->scene().dProj(), 4);
    QCOMPARE(document_->scene().heads, 2);
    QVERIFY2(weights_->message().contains(QStringLiteral("Heads")),
             qPrintable(weights_->message()));
    QVERIFY(document_->scene().projections.value.leftCols(4) ==
            before.projections.value.leftCols(4));
    QCOMPARE(document_->scene().projections.output.rows(), 4);
    QCOMPARE(document_->scene().dOut(), before.dOut());
    verifyEngineMatchesRecompute(*document_);
    document_->undoStack()->undo();
    COMPARE_SCENES(document_->scene(), before);
    QCOMPARE(child<QSpinBox>(weights_.get(), "dProjSpin")->value(), 6);
}

void TestWeightsEditor::outputProjectionToggle() {
    auto* check = child<QCheckBox>(weights_.get(), "outputCheck");
    auto* tabs = child<QTabWidget>(weights_.get(), "weightTabs");
    QVERIFY(!tabs->isTabVisible(3));
    check->setChecked(true);
    const Scene& scene = document_->scene();
    QVERIFY(scene.projections.hasOutput);
    QCOMPARE(scene.projections.output.rows(), scene.dProj());
    QCOMPARE(scene.projections.output.cols(), scene.dModel());
    QVERIFY(tabs->isTabVisible(3));
    // Drawn as a re-roll with the current seed and distribution draws W_O.
    QVERIFY(scene.projections.output == drawnProjections(weights_->drawSpec(), 3, 3, 3).output);
    verifyEngineMatchesRecompute(*document_);
    check->setChecked(false);
    QVERIFY(!document_->scene().projections.hasOutput);
    QVERIFY(!tabs->isTabVisible(3));
}

void TestWeightsEditor::rerollSameSeedSameMatrices() {
    auto* seed = child<QSpinBox>(weights_.get(), "weightSeedSpin");
    auto* distribution = child<QComboBox>(weights_.get(), "distributionCombo");
    auto* reroll = child<QPushButton>(weights_.get(), "rerollButton");
    distribution->setCurrentIndex(distribution->findData(int(InitDistribution::Normal)));
    child<QDoubleSpinBox>(weights_.get(), "stdSpin")->setValue(0.5);
    document_->setHeads(3);
    seed->setValue(7);
    reroll->click();
    const Projections first = document_->scene().projections;
    QCOMPARE(document_->scene().heads, 3);  // kept
    QCOMPARE(first.mode, ProjectionMode::Separate);
    InitSpec spec;
    spec.seed = 7;
    spec.std = 0.5;
    spec.dProj = 3;
    SplitMix64 rng(7);
    const Projections expected = drawProjections(rng, spec, 3);
    QVERIFY(first.query == expected.query);
    QVERIFY(first.key == expected.key);
    QVERIFY(first.value == expected.value);
    verifyEngineMatchesRecompute(*document_);

    seed->setValue(8);
    reroll->click();
    QVERIFY(document_->scene().projections.query != first.query);
    seed->setValue(7);
    reroll->click();
    QVERIFY(document_->scene().projections.query == first.query);
    QVERIFY(document_->scene().projections.key == first.key);
    QVERIFY(document_->scene().projections.value == first.value);
}

void TestWeightsEditor::rerolledSceneSavesAndLoadsBack() {
    // After a re-roll the scene keeps an init (compact files); after an edit it must not, or the
    // edit would be lost on save. Either way saving and loading gives the same numbers.
    load("bert-base");
    auto* reroll = child<QPushButton>(weights_.get(), "rerollButton");
    child<QCheckBox>(weights_.get(), "W_QBiasCheck")->setChecked(true);
    child<QSpinBox>(weights_.get(), "weightSeedSpin")->setValue(3);
    reroll->click();
    QVERIFY(document_->scene().init.has_value());
    QVERIFY(!document_->scene().projections.valueBias.isZero(0));  // bias rows drawn
    Scene loaded = io::parseScene(io::sceneToJson(document_->scene()));
    loaded.init = document_->scene().init;
    COMPARE_SCENES(loaded, document_->scene());

    auto* model = queryModel();
    QVERIFY(model->setData(model->index(0, model->firstValueColumn()), QStringLiteral("1.25")));
    auto* wq =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_QTable")->model());
    QVERIFY(wq->setData(wq->index(0, 0), QStringLiteral("0.75")));
    QVERIFY(!document_->scene().init.has_value());
    loaded = io::parseScene(io::sceneToJson(document_->scene()));
    COMPARE_SCENES(loaded, document_->scene());
}

void TestWeightsEditor::undoRedoRestoreExactly() {
    std::vector<Scene> states{document_->scene()};
    auto record = [&] { states.push_back(document_->scene()); };
    TokenTableModel* model = queryModel();
    QVERIFY(model->setData(model->index(0, model->firstValueColumn()), QStringLiteral("0.1")));
    record();
    child<QPushButton>(tokens_.get(), "queryAddButton")->click();
    record();
    child<QSpinBox>(tokens_.get(), "dModelSpin")->setValue(4);
    record();
    auto* mode = child<QComboBox>(weights_.get(), "projectionModeCombo");
    mode->setCurrentIndex(mode->findData(int(ProjectionMode::SharedQK)));
    record();
    child<QSpinBox>(weights_.get(), "weightSeedSpin")->setValue(11);
    child<QPushButton>(weights_.get(), "rerollButton")->click();
    record();
    child<QCheckBox>(weights_.get(), "outputCheck")->setChecked(true);
    record();
    auto* wo =
        qobject_cast<MatrixTableModel*>(child<QTableView>(weights_.get(), "W_OTable")->model());
    QVERIFY(wo->setData(wo->index(1, 2), QStringLiteral("-2.25")));
    record();
    child<QCheckBox>(tokens_.get(), "crossAttentionCheck")->setChecked(true);
    record();
    QCOMPARE(document_->undoStack()->count(), int(states.size()) - 1);

    for (int i = int(states.size()) - 2; i >= 0; --i) {
        document_->undoStack()->undo();
        COMPARE_SCENES(document_->scene(), states[i]);
        verifyEngineMatchesRecompute(*document_);
    }
    for (std::size_t i = 1; i < states.size(); ++i) {
        document_->undoStack()->redo();
        COMPARE_SCENES(document_->scene(), states[i]);
    }
    // The views follow: the last state has 5 query tokens of width 4 and a source.
    QCOMPARE(queryModel()->rowCount(), 5);
    QCOMPARE(queryModel()->columnCount(), 1 + 4);  // no padding column for cross-attention queries
}

QTEST_MAIN(TestWeightsEditor)
#include "test_weights_editor.moc"
