// The main window driven as a user would: keys on sliders, clicks and keys on the maps' cells,
// undo and redo, one map enlarged; every check compares with the document's float engine. The
// window on a small screen: test_window_screen.

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QStandardPaths>
#include <QStatusBar>
#include <QUndoStack>
#include <QtTest>
#include <memory>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/cell_explanation.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/window_fixture.h"
#include "ui/window/main_window.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;
using namespace ae::plot;

class TestWindow : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void headSliderKeysChangeTheHeads();
    void mapsEqualTheEngineAfterAnEdit();
    void entropyStripHoldsEachRowsEntropy();
    void maskModeTogglesACellByClicking();
    void causallyHiddenCellCannotBeShown();
    void maskedCellsAreMarkedWithTheirValues();
    void hoverSetsTheExplanation();
    void clickSelectsARowInEveryMap();
    void sliderDragIsOneUndoStep();
    void sliderDragBackToItsStartIsNoUndoStep();
    void errorKeepsTheMapsUnderABanner();
    void allStagesForOneHead();
    void bertShapedChangesAreInstant();
    void startsUpWithinASecond();
    void everyPresetEveryStage();
    void keyboardSelectsACellOutsidePresentation();
    void enlargeThenRestoreKeepsTheArrangement();
    void entropyStripOffRemovesIt();
    void sharedColourBarOnceForTheGrid();
    void theStageIsRememberedByItsKey();
    void valueWeightedMapsShareWhatEachHeadMoves();

private:
    // Waits for queued replots so that the axes know their pixels.
    void settle();
    HeatmapController* weightsTile(int head) const {
        return window_->grid()->tile(Stage::Weights, head);
    }
    void clickCell(HeatmapController* tile, int row, int column);
    AttentionDocument* document() const { return window_->document(); }
    const EngineF& engine() const { return window_->document()->engine(); }

    std::unique_ptr<MainWindow> window_;
};

void TestWindow::initTestCase() {
    test::startWindowTests();
}

void TestWindow::init() {
    window_ = test::firstStartWindow();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    settle();
}

void TestWindow::cleanup() {
    window_.reset();
}

void TestWindow::settle() {
    test::settleWindow(*window_);
}

void TestWindow::clickCell(HeatmapController* tile, int row, int column) {
    QTest::mouseClick(tile->widget(), Qt::LeftButton, {}, tile->cellCenter(row, column).toPoint());
}

void TestWindow::headSliderKeysChangeTheHeads() {
    auto* slider = window_->findChild<QSlider*>(QStringLiteral("headSlider"));
    QVERIFY(slider);
    QCOMPARE(document()->scene().heads, 4);
    QCOMPARE(window_->grid()->tiles().size(), size_t(5));  // 4 heads + the mean
    QTest::keyClick(slider, Qt::Key_Right);
    QCOMPARE(document()->scene().heads, 8);  // the next divisor of d_proj = 8
    QCOMPARE(window_->grid()->tiles().size(), size_t(9));
    QTest::keyClick(slider, Qt::Key_Home);
    QCOMPARE(document()->scene().heads, 1);
    QCOMPARE(window_->grid()->tiles().size(), size_t(1));  // no mean over a single head
    QTest::keyClick(slider, Qt::Key_End);
    QCOMPARE(document()->scene().heads, 8);
    QVERIFY(window_->findChild<QLabel*>(QStringLiteral("headsLabel"))
                ->text()
                .contains(QStringLiteral("d_head = <b>1</b>")));
    QCOMPARE(document()->undoStack()->count(), 3);
}

void TestWindow::mapsEqualTheEngineAfterAnEdit() {
    const double before = weightsTile(2)->cellValue(1, 3);
    QVERIFY(document()->setEmbeddingValue(Stream::Query, 1, 3, 2.5));
    QVERIFY(weightsTile(2)->cellValue(1, 3) != before);
    for (int h = 0; h < 4; ++h) {
        const HeatmapController* map = weightsTile(h);
        for (int q = 0; q < 6; ++q) {
            for (int k = 0; k < 6; ++k)
                QCOMPARE(map->cellValue(q, k), static_cast<double>(engine().weights(h)(q, k)));
        }
    }
}

// The strip beside each weight map: H_i = -Σ_j w_ij log2 w_ij of the engine's row, computed here
// in double; masked keys and a fully masked row contribute exactly nothing.
void TestWindow::entropyStripHoldsEachRowsEntropy() {
    Mask mask = document()->scene().mask;
    mask.causal = true;
    mask.padding = {false, false, false, false, false, true};  // hides key 5 from every row
    for (const bool masked : {false, true}) {
        if (masked) document()->setMask(mask);
        for (int h = 0; h < engine().heads(); ++h) {
            const std::vector<double> strip = weightsTile(h)->entropyValues();
            const EngineF::Matrix& w = engine().weights(h);
            QCOMPARE(int(strip.size()), int(w.rows()));
            for (int i = 0; i < w.rows(); ++i) {
                double expected = 0.0;
                for (int j = 0; j < w.cols(); ++j) {
                    const double p = w(i, j);
                    if (p > 0.0) expected -= p * std::log2(p);
                }
                QVERIFY2(std::abs(strip[size_t(i)] - expected) <= 1e-5,
                         qPrintable(QStringLiteral("head %1 row %2: %3, expected %4")
                                        .arg(h)
                                        .arg(i)
                                        .arg(strip[size_t(i)])
                                        .arg(expected)));
            }
            if (masked) QCOMPARE(strip[0], 0.0);  // row 0 sees one key: certain
        }
    }
    QVERIFY(weightsTile(0)->entropyValues().at(5) > 0.1);
}

void TestWindow::maskModeTogglesACellByClicking() {
    window_->maskEditAction()->trigger();
    QVERIFY(window_->grid()->maskEditMode());
    QVERIFY(window_->statusBar()->findChild<QLabel*>(QStringLiteral("maskModeLabel"))->isVisible());
    clickCell(weightsTile(1), 2, 4);
    QVERIFY(document()->scene().mask.allowed.has_value());
    QCOMPARE((*document()->scene().mask.allowed)(2, 4), false);
    QCOMPARE(int((*document()->scene().mask.allowed).count()), 35);
    QCOMPARE(engine().weights(0)(2, 4), 0.0f);  // the same mask for every head
    QVERIFY(weightsTile(3)->isMarkedMasked(2, 4));
    QCOMPARE(weightsTile(3)->cellValue(2, 4), 0.0);
    clickCell(weightsTile(1), 2, 4);
    QCOMPARE((*document()->scene().mask.allowed)(2, 4), true);
    QVERIFY(engine().weights(0)(2, 4) > 0.0f);
    QVERIFY(!weightsTile(3)->isMarkedMasked(2, 4));
    // Out of mask mode a click selects instead.
    window_->maskEditAction()->trigger();
    clickCell(weightsTile(1), 0, 0);
    QCOMPARE((*document()->scene().mask.allowed)(0, 0), true);
}

void TestWindow::causallyHiddenCellCannotBeShown() {
    window_->findChild<QCheckBox*>(QStringLiteral("causalCheck"))->setChecked(true);
    QVERIFY(document()->scene().mask.causal);
    window_->maskEditAction()->trigger();
    const int steps = document()->undoStack()->count();
    clickCell(weightsTile(0), 1, 3);
    QCOMPARE(document()->undoStack()->count(), steps);
    QVERIFY(!document()->scene().mask.allowed.has_value());
    QCOMPARE(engine().weights(0)(1, 3), 0.0f);
    QVERIFY2(window_->statusBar()->currentMessage().contains(QStringLiteral("causal")),
             qPrintable(window_->statusBar()->currentMessage()));
    // A visible cell still toggles; the hidden one stays hidden either way.
    clickCell(weightsTile(0), 3, 1);
    QCOMPARE((*document()->scene().mask.allowed)(3, 1), false);
}

void TestWindow::maskedCellsAreMarkedWithTheirValues() {
    window_->findChild<QCheckBox*>(QStringLiteral("causalCheck"))->setChecked(true);
    for (int h = 0; h < 4; ++h) {
        for (int q = 0; q < 6; ++q) {
            for (int k = q + 1; k < 6; ++k) {
                QVERIFY(weightsTile(h)->isMarkedMasked(q, k));
                QCOMPARE(weightsTile(h)->cellValue(q, k), 0.0);
            }
            QVERIFY(!weightsTile(h)->isMarkedMasked(q, 0));
        }
    }
    QVERIFY(window_->grid()->tile(Stage::Weights, -1)->isMarkedMasked(0, 1));
    document()->setMaskFill(0.0);
    for (int h = 0; h < 4; ++h) {
        QVERIFY(weightsTile(h)->isMarkedMasked(0, 5));
        const double value = weightsTile(h)->cellValue(0, 5);
        QVERIFY(value > 0.0);
        QCOMPARE(value, static_cast<double>(engine().weights(h)(0, 5)));
    }
}

void TestWindow::hoverSetsTheExplanation() {
    HeatmapController* tile = weightsTile(2);
    const QPointF at = tile->cellCenter(3, 1);
    QMouseEvent move(QEvent::MouseMove, at, tile->widget()->mapToGlobal(at), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(tile->widget(), &move);
    QCOMPARE(tile->widget()->toolTip(), explainCell(engine(), Stage::Weights, 2, 3, 1));
    QVERIFY(tile->widget()->toolTip().contains(QStringLiteral("exp(")));
}

void TestWindow::clickSelectsARowInEveryMap() {
    QSignalSpy spy(window_->grid(), &HeatmapGrid::selectedRowChanged);
    clickCell(weightsTile(3), 4, 2);
    QCOMPARE(window_->grid()->selectedRow(), 4);
    QCOMPARE(spy.count(), 1);
    clickCell(weightsTile(0), 4, 0);
    QCOMPARE(window_->grid()->selectedRow(), -1);
}

void TestWindow::sliderDragIsOneUndoStep() {
    auto* slider = window_->findChild<QSlider*>(QStringLiteral("scaleSlider"));
    const Scene before = document()->scene();
    const EngineF::Matrix weightsBefore = engine().weights(1);
    const int steps = document()->undoStack()->count();
    slider->setSliderDown(true);
    for (int position : {40, 90, 150, 200})
        slider->setValue(position);
    slider->setSliderDown(false);
    QCOMPARE(document()->undoStack()->count(), steps + 1);
    QCOMPARE(document()->scene().scale.kind, ScaleKind::Divisor);
    QCOMPARE(document()->scene().scale.divisor, 10.0);
    const EngineF::Matrix weightsAfter = engine().weights(1);
    QVERIFY(weightsAfter != weightsBefore);

    document()->undoStack()->undo();
    QCOMPARE(document()->scene().scale.kind, before.scale.kind);
    QVERIFY(engine().weights(1) == weightsBefore);
    QCOMPARE(slider->value(), 115);  // √2 on the log scale from 0.1: 100·log10(14.14)
    document()->undoStack()->redo();
    QCOMPARE(document()->scene().scale.divisor, 10.0);
    QVERIFY(engine().weights(1) == weightsAfter);
    QCOMPARE(weightsTile(1)->cellValue(2, 2), static_cast<double>(weightsAfter(2, 2)));
}

void TestWindow::sliderDragBackToItsStartIsNoUndoStep() {
    auto* scale = window_->findChild<QSlider*>(QStringLiteral("scaleSlider"));
    scale->setValue(150);  // a divisor the slider holds exactly, one step
    document()->markSaved();
    QVERIFY(!document()->isModified());
    QSignalSpy modified(document(), &AttentionDocument::modifiedChanged);
    const Scene before = document()->scene();
    const int steps = document()->undoStack()->count();
    scale->setSliderDown(true);
    for (int position : {40, 90, 150})
        scale->setValue(position);
    scale->setSliderDown(false);
    QCOMPARE(document()->undoStack()->count(), steps);
    QVERIFY(!document()->isModified());
    QCOMPARE(document()->scene().scale.divisor, before.scale.divisor);
    QCOMPARE(document()->undoStack()->undoText(),
             QStringLiteral("Change scaling"));  // the earlier step

    // Not every drag back is dropped: one that ends elsewhere is still one step.
    scale->setSliderDown(true);
    for (int position : {40, 151})
        scale->setValue(position);
    scale->setSliderDown(false);
    QCOMPARE(document()->undoStack()->count(), steps + 1);
    QVERIFY(document()->isModified());
    QVERIFY(window_->isWindowModified());
    QCOMPARE(modified.count(), 3);  // away from, back to, and away from the saved state
    QCOMPARE(modified.last().at(0).toBool(), true);

    auto* heads = window_->findChild<QSlider*>(QStringLiteral("headSlider"));
    const int headsPosition = heads->value();
    const int headsBefore = document()->scene().heads;
    heads->setSliderDown(true);
    heads->setValue(headsPosition == 0 ? 1 : 0);
    QVERIFY(document()->scene().heads != headsBefore);
    heads->setValue(headsPosition);
    heads->setSliderDown(false);
    QCOMPARE(document()->scene().heads, headsBefore);
    QCOMPARE(document()->undoStack()->count(), steps + 1);
}

void TestWindow::errorKeepsTheMapsUnderABanner() {
    const double shown = weightsTile(0)->cellValue(1, 1);
    QVERIFY(window_->grid()->errorBanner().isEmpty());
    document()->setScale({ScaleKind::Divisor, 1e-45});  // float overflow of the scaled scores
    QVERIFY(!document()->errorText().isEmpty());
    QVERIFY(window_->grid()->errorBanner().contains(QStringLiteral("overflow")));
    QCOMPARE(weightsTile(0)->cellValue(1, 1), shown);
    document()->undoStack()->undo();
    QVERIFY(window_->grid()->errorBanner().isEmpty());
}

void TestWindow::allStagesForOneHead() {
    window_->grid()->setViewMode(ViewMode::AllStages);
    window_->grid()->setHead(3);
    QCOMPARE(window_->grid()->tiles().size(), size_t(9));  // the default scene has an output
    HeatmapController* q = window_->grid()->tile(Stage::Query, 3);
    QVERIFY(q);
    QCOMPARE(q->columns(), 2);
    QCOMPARE(q->cellValue(5, 1), static_cast<double>(engine().headQuery(3)(5, 1)));
    HeatmapController* concat = window_->grid()->tile(Stage::Concat, 3);
    QVERIFY(concat);
    QCOMPARE(concat->columns(), 8);
    // Heads shrink to 2: the shown head follows.
    document()->setHeads(2);
    QCOMPARE(window_->grid()->head(), 1);
    QCOMPARE(window_->grid()->tile(Stage::Query, 1)->columns(), 4);
}

// Twelve heads of width 64 at L = 6: scaling steps refill all 13 maps and a head-count change
// re-lays them out. How fast is for `attention-explorer bench --ui` to measure, not a test.
void TestWindow::bertShapedChangesAreInstant() {
    document()->resetScene(io::loadPreset(QStringLiteral("bert-base")));
    settle();
    QCOMPARE(window_->grid()->tiles().size(), size_t(13));
    QElapsedTimer timer;
    timer.start();
    for (int i = 1; i <= 10; ++i) {
        document()->setScale({ScaleKind::Divisor, 1.0 + i});
        for (const HeatmapTile& t : window_->grid()->tiles())
            t.controller->replotNow();
    }
    const double perStep = timer.elapsed() / 10.0;
    timer.restart();
    document()->setHeads(6);
    settle();
    const qint64 headChange = timer.elapsed();
    qInfo("bert-base L=6: %.1f ms per scaling step, %lld ms for a head change", perStep,
          headChange);
    QCOMPARE(window_->grid()->tiles().size(), size_t(7));
}

void TestWindow::startsUpWithinASecond() {
    window_.reset();
    QElapsedTimer timer;
    timer.start();
    window_ = std::make_unique<MainWindow>();
    window_->openStartupScene();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QCoreApplication::processEvents();
    const qint64 elapsed = timer.elapsed();
    qInfo("window with the default scene shown in %lld ms", elapsed);
    QCOMPARE(document()->scene().tokens.size(), size_t(6));
}

// Every built-in scene (cross-attention, identity, shared Q/K, 12 heads...) in every stage: each
// map holds exactly its engine matrix, with rows and columns the right way round.
void TestWindow::everyPresetEveryStage() {
    for (const io::PresetInfo& preset : io::presets()) {
        document()->resetScene(io::loadPreset(preset.name));
        for (int s = 0; s < kStageCount; ++s) {
            const Stage stage = static_cast<Stage>(s);
            window_->grid()->setStage(stage);
            if (!stageAvailable(engine(), stage)) continue;
            for (const HeatmapTile& t : window_->grid()->tiles()) {
                if (t.meanOverHeads) continue;
                const EngineF::ConstBlock m = stageMatrix(engine(), t.stage, t.head);
                QCOMPARE(t.controller->rows(), int(m.rows()));
                QCOMPARE(t.controller->columns(), int(m.cols()));
                // The last cell, or the last pool of cells when the map has more than pixels.
                const int i = int(m.rows()) - 1, j = int(m.cols()) - 1;
                const int ry = t.controller->rowsPerCell(), rx = t.controller->columnsPerCell();
                const float expected =
                    m.block(i / ry * ry, j / rx * rx, i % ry + 1, j % rx + 1).maxCoeff();
                QVERIFY2(t.controller->shownCellValue(i / ry, j / rx) == double(expected),
                         qPrintable(preset.name + QStringLiteral(" ") + stageName(stage)));
            }
        }
    }
}

// The maps take the keyboard: Tab reaches them, the arrows move a ring, Enter selects the ring's
// query row as a click would, and the ring and a frame round the map show where the keys go.
void TestWindow::keyboardSelectsACellOutsidePresentation() {
    QApplication::setActiveWindow(window_.get());
    HeatmapController* tile = weightsTile(1);
    QCOMPARE(tile->widget()->focusPolicy(), Qt::StrongFocus);
    tile->widget()->setFocus(Qt::TabFocusReason);
    QTRY_VERIFY(tile->widget()->hasFocus());
    QCOMPARE(tile->cursorCell(), QPoint(0, 0));
    QTest::keyClick(tile->widget(), Qt::Key_Down);
    QTest::keyClick(tile->widget(), Qt::Key_Down);
    QTest::keyClick(tile->widget(), Qt::Key_Right);
    QCOMPARE(tile->cursorCell(), QPoint(1, 2));  // (column, row)
    // The explanation a pointer would get.
    QCOMPARE(tile->widget()->toolTip(), explainCell(engine(), Stage::Weights, 1, 2, 1));
    QCOMPARE(window_->grid()->selectedRow(), -1);
    QTest::keyClick(tile->widget(), Qt::Key_Return);
    QCOMPARE(window_->grid()->selectedRow(), 2);
    // Off the edge: the ring stays on the map.
    for (int i = 0; i < 10; ++i)
        QTest::keyClick(tile->widget(), Qt::Key_Down);
    QCOMPARE(tile->cursorCell(), QPoint(1, 5));
    QTest::keyClick(tile->widget(), Qt::Key_Space);
    QCOMPARE(window_->grid()->selectedRow(), 5);

    // The ring and the frame are drawn: the focused plot differs from the same plot without
    // focus at the frame and round the ring's cell.
    settle();
    const QImage focused = tile->widget()->grab().toImage();
    const double cellWidth = tile->cellCenter(5, 2).x() - tile->cellCenter(5, 1).x();
    const double cellHeight = tile->cellCenter(5, 1).y() - tile->cellCenter(4, 1).y();
    const QRect ring = QRectF(tile->cellCenter(5, 1) - QPointF(cellWidth, cellHeight) / 2.0,
                              QSizeF(cellWidth, cellHeight))
                           .toAlignedRect();
    window_->grid()->setFocus();
    settle();
    QVERIFY(!tile->widget()->hasFocus());
    const QImage unfocused = tile->widget()->grab().toImage();
    QVERIFY(focused.pixel(2, focused.height() / 2) != unfocused.pixel(2, unfocused.height() / 2));
    int differing = 0;
    for (int x = ring.left(); x <= ring.right(); ++x) {
        for (int y = ring.top(); y <= ring.bottom(); ++y)
            differing += focused.pixel(x, y) != unfocused.pixel(x, y);
    }
    QVERIFY2(differing > ring.width() * 2, qPrintable(QString::number(differing)));
}

// Double-click shows one map alone; again brings back exactly the grid it left.
void TestWindow::enlargeThenRestoreKeepsTheArrangement() {
    HeatmapGrid* grid = window_->grid();
    const auto places = [grid] {
        QList<QRect> r;
        for (const HeatmapTile& t : grid->tiles())
            r << (t.controller->widget()->isVisible() ? t.controller->widget()->geometry()
                                                      : QRect());
        return r;
    };
    QApplication::setActiveWindow(window_.get());
    const QList<QRect> before = places();
    const int columns = grid->arrangedColumns();
    HeatmapController* tile = weightsTile(2);
    const QPoint at = tile->cellCenter(1, 1).toPoint();
    QTest::mouseDClick(tile->widget(), Qt::LeftButton, {}, at);
    settle();
    QCOMPARE(grid->enlargedTile(), 2);
    for (const HeatmapTile& t : grid->tiles())
        QCOMPARE(t.controller->widget()->isVisible(), t.controller == tile);
    const QSize viewport = grid->scrollArea()->viewport()->size();
    QVERIFY(tile->widget()->width() > viewport.width() * 0.9);
    QVERIFY(tile->widget()->height() > viewport.height() * 0.9);
    // Z on the enlarged map (it has focus after the click) restores the grid.
    QVERIFY(tile->widget()->hasFocus());
    QTest::keyClick(tile->widget(), Qt::Key_Z);
    settle();
    QCOMPARE(grid->enlargedTile(), -1);
    QCOMPARE(grid->arrangedColumns(), columns);
    QCOMPARE(places(), before);
}

void TestWindow::entropyStripOffRemovesIt() {
    HeatmapGrid* grid = window_->grid();
    HeatmapController* tile = weightsTile(0);
    QVERIFY(tile->entropyStripDrawn());
    const double mapWidth = tile->cellArea().width();
    GridView view = grid->view();
    QVERIFY(view.showEntropy);
    grid->setShowEntropy(false);
    settle();
    QVERIFY(!grid->view().showEntropy);
    for (int h = 0; h < 4; ++h) {
        QVERIFY(!weightsTile(h)->entropyStripDrawn());
        QVERIFY(!weightsTile(h)->entropyStripHasRoom());
    }
    // The room goes to the map.
    QVERIFY(tile->cellArea().width() > mapWidth);
    // A scene's view brings it back.
    view.showEntropy = true;
    grid->setView(view);
    settle();
    QVERIFY(weightsTile(0)->entropyStripDrawn());
}

// Presentation layout: the weights maps all run 0..1 in the same colours, so one bar serves the
// grid; a stage whose maps each have their own range keeps a bar per map until the ranges are
// shared.
void TestWindow::sharedColourBarOnceForTheGrid() {
    HeatmapGrid* grid = window_->grid();
    QVERIFY(!grid->sharedColorBarShown());
    grid->setPresentationLayout(true);
    settle();
    QVERIFY(grid->sharedColorBarShown());
    QVERIFY(grid->sharedColorBar()->isVisible());
    for (const HeatmapTile& t : grid->tiles()) {
        QVERIFY(!t.controller->colorScaleShown());
        QVERIFY(!t.controller->colorBarDrawn());
    }
    // The bar's plot holds one colour scale and nothing else.
    QVERIFY(grid->sharedColorBarRange().has_value());
    QCOMPARE(*grid->sharedColorBarRange(), (ValueRange{0.0, 1.0}));
    // Scores: each head has its own range, so each map keeps its bar...
    grid->setStage(Stage::Scores);
    settle();
    QVERIFY(!grid->sharedColorBarShown());
    for (const HeatmapTile& t : grid->tiles())
        QVERIFY(t.controller->colorScaleShown());
    // ...until the ranges are shared.
    grid->setSharedRange(true);
    settle();
    QVERIFY(grid->sharedColorBarShown());
    const ValueRange shared = grid->tiles().front().controller->colorRange();
    QVERIFY(grid->sharedColorBarRange().has_value());
    QCOMPARE(*grid->sharedColorBarRange(), shared);
    for (const HeatmapTile& t : grid->tiles())
        QVERIFY(!t.controller->colorScaleShown());
    // Out of presentation every map has its own bar again.
    grid->setPresentationLayout(false);
    settle();
    QVERIFY(!grid->sharedColorBarShown());
    for (const HeatmapTile& t : grid->tiles())
        QVERIFY(t.controller->colorBarDrawn());
}

// The stage is saved by its key: a stage added to the table (the capped scores) moves every index
// after it, and a saved index would then open another stage.
void TestWindow::theStageIsRememberedByItsKey() {
    auto* stage = window_->findChild<QComboBox*>(QStringLiteral("stageCombo"));
    QVERIFY(stage);
    stage->setCurrentIndex(static_cast<int>(Stage::Value));
    const QString shown = stage->currentText();
    QCOMPARE(QSettings().value(QStringLiteral("view/stage-key")).toString(), QStringLiteral("v"));
    window_ = std::make_unique<MainWindow>();
    auto* restored = window_->findChild<QComboBox*>(QStringLiteral("stageCombo"));
    QVERIFY(restored);
    QCOMPARE(restored->currentIndex(), static_cast<int>(Stage::Value));
    QCOMPARE(restored->currentText(), shown);
}

// The View menu's Value-weighted weights: every weights map (and their mean) draws
// α_ij·‖v_j·W_O^h‖ / Σ_j α_ij·‖v_j·W_O^h‖, computed here by hand in double from the engine's V
// and the scene's W_O; without an output projection, ‖v_j‖. Off again, the softmax weights.
void TestWindow::valueWeightedMapsShareWhatEachHeadMoves() {
    auto* action = window_->findChild<QAction*>(QStringLiteral("valueWeightedAction"));
    QVERIFY(action && action->isCheckable() && !action->isChecked());
    const auto byHand = [this](int head, bool throughOutput) {
        const Scene& scene = document()->scene();
        const int dHead = engine().dHead();
        const auto v = engine().headValue(head);
        std::vector<double> f(static_cast<std::size_t>(v.rows()));
        for (Eigen::Index j = 0; j < v.rows(); ++j) {
            double squares = 0;
            const Eigen::Index width = throughOutput ? scene.projections.output.cols() : dHead;
            for (Eigen::Index c = 0; c < width; ++c) {
                double moved = 0;
                if (!throughOutput) moved = v(j, c);
                for (Eigen::Index k = 0; throughOutput && k < dHead; ++k)
                    moved += double(v(j, k)) * scene.projections.output(head * dHead + k, c);
                squares += moved * moved;
            }
            f[std::size_t(j)] = std::sqrt(squares);
        }
        const auto& alpha = engine().weights(head);
        Eigen::MatrixXd share(alpha.rows(), alpha.cols());
        for (Eigen::Index i = 0; i < alpha.rows(); ++i) {
            double sum = 0;
            for (Eigen::Index j = 0; j < alpha.cols(); ++j)
                sum += double(alpha(i, j)) * f[std::size_t(j)];
            for (Eigen::Index j = 0; j < alpha.cols(); ++j)
                share(i, j) = sum > 0 ? double(alpha(i, j)) * f[std::size_t(j)] / sum : 0.0;
        }
        return share;
    };
    const auto checkTiles = [&](bool throughOutput) {
        Eigen::MatrixXd mean = Eigen::MatrixXd::Zero(6, 6);
        for (int h = 0; h < 4; ++h) {
            const Eigen::MatrixXd expected = byHand(h, throughOutput);
            mean += expected / 4.0;
            for (int q = 0; q < 6; ++q)
                for (int k = 0; k < 6; ++k)
                    QVERIFY2(std::abs(weightsTile(h)->cellValue(q, k) - expected(q, k)) < 1e-6,
                             qPrintable(QStringLiteral("head %1 (%2, %3): %4, by hand %5")
                                            .arg(h)
                                            .arg(q)
                                            .arg(k)
                                            .arg(weightsTile(h)->cellValue(q, k))
                                            .arg(expected(q, k))));
        }
        for (int q = 0; q < 6; ++q)
            for (int k = 0; k < 6; ++k)
                QVERIFY(std::abs(weightsTile(-1)->cellValue(q, k) - mean(q, k)) < 1e-6);
    };
    QVERIFY(document()->scene().projections.hasOutput);
    action->trigger();
    settle();
    QVERIFY(window_->grid()->view().valueWeighted);
    QVERIFY(weightsTile(1)->title().contains(QStringLiteral("value-weighted")));
    QVERIFY(weightsTile(-1)->title().contains(QStringLiteral("value-weighted")));
    checkTiles(true);
    // The weights and their value-weighted shares differ somewhere: the toggle draws other
    // numbers, not the same ones.
    double moved = 0;
    for (int q = 0; q < 6; ++q)
        for (int k = 0; k < 6; ++k)
            moved = std::max(moved, std::abs(weightsTile(1)->cellValue(q, k) -
                                             double(engine().weights(1)(q, k))));
    QVERIFY(moved > 1e-3);
    // With AE_SHOTS_DIR set: the window at a projector's size, numbers in the cells.
    const QString shots = qEnvironmentVariable("AE_SHOTS_DIR");
    if (!shots.isEmpty()) {
        window_->resize(1024, 768);
        window_->grid()->setShowValues(true);
        QTest::qWait(300);  // the maps' queued replots
        QVERIFY(
            window_->grab().save(shots + QStringLiteral("/explorer-value-weighted-1024x768.png")));
        window_->grid()->setShowValues(false);
    }
    // An edit recomputes them.
    QVERIFY(document()->setEmbeddingValue(Stream::Query, 1, 3, 2.5));
    settle();
    checkTiles(true);
    // The hover explains the arithmetic.
    HeatmapController* tile = weightsTile(1);
    const QPointF at = tile->cellCenter(2, 1);
    QMouseEvent move(QEvent::MouseMove, at, tile->widget()->mapToGlobal(at), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QCoreApplication::sendEvent(tile->widget(), &move);
    QVERIFY2(tile->widget()->toolTip().contains(QStringLiteral("Value-weighted share")),
             qPrintable(tile->widget()->toolTip()));
    // Without an output projection the norms are the values' own.
    Scene noOutput = document()->scene();
    noOutput.projections.hasOutput = false;
    noOutput.projections.output.resize(0, 0);
    noOutput.projections.outputBias.resize(0);
    document()->setSceneWithoutUndo(noOutput);
    settle();
    checkTiles(false);
    action->trigger();
    settle();
    QVERIFY(!weightsTile(1)->title().contains(QStringLiteral("value-weighted")));
    for (int q = 0; q < 6; ++q)
        for (int k = 0; k < 6; ++k)
            QCOMPARE(weightsTile(1)->cellValue(q, k), double(engine().weights(1)(q, k)));
}

QTEST_MAIN(TestWindow)
#include "test_window.moc"
