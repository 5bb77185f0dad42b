// Presentation mode and the window's keys: everything reachable by keyboard alone, labels and
// numbers kept at projector sizes, the layout restored on leaving, text that grows in the
// classroom views, no shortcut used twice and the shortcuts dialog listing every one.

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleOptionSlider>
#include <QTabBar>
#include <QTableWidget>
#include <QtTest>
#include <map>
#include <memory>

#include "document/attention_document.h"
#include "io/scene_file.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "support/classroom_window.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/comparison_views.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/classroom/neuron_view.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/presentation_mode.h"

using namespace ae;
using namespace ae::ui;

class TestPresentation : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void init();
    void cleanup();
    void presentationByKeyboardAlone();
    void walkthroughBringsMarkedMapsIntoView();
    void presentationKeepsLabelsAndNumbersFor12Tokens();
    void leavingPresentationRestoresTheLayout();
    void presentationTextGrowsInTheClassroomViews();
    void noDuplicateShortcuts();
    void shortcutsDialogListsEveryAction();

private:
    void settle() { test::settleClassroom(); }
    void open(const char* preset) {
        window_->openPreset(QString::fromLatin1(preset));
        settle();
    }
    Classroom* classroom() const { return window_->classroom(); }
    const EngineF& engine() const { return window_->document()->engine(); }

    std::unique_ptr<MainWindow> window_;
};

void TestPresentation::initTestCase() {
    test::startClassroomTests();
}

void TestPresentation::init() {
    window_ = test::classroomWindow();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QApplication::setActiveWindow(window_.get());
    settle();
}

void TestPresentation::cleanup() {
    window_.reset();
    test::forgetPresentationScale();
}

void TestPresentation::presentationByKeyboardAlone() {
    PresentationMode* mode = classroom()->presentation();
    QDockWidget* tokens = window_->findChild<QDockWidget*>(QStringLiteral("tokensDock"));
    QVERIFY(tokens->isVisible());
    const double base = QApplication::font().pointSizeF();
    auto* headSpin = window_->findChild<QSpinBox*>(QStringLiteral("headSpin"));
    // Outside presentation mode the single keys are off: H is left for typing.
    QTest::keyClick(window_.get(), Qt::Key_H);
    QCOMPARE(headSpin->value(), 0);

    QTest::keyClick(window_.get(), Qt::Key_F11);
    settle();
    QVERIFY(mode->isActive());
    QVERIFY(window_->isFullScreen());
    QVERIFY(!tokens->isVisible());
    QCOMPARE(mode->fontScale(), PresentationMode::kDefaultScale);
    QVERIFY(std::abs(QApplication::font().pointSizeF() - base * 1.5) < 0.01);
    const double tickBefore =
        window_->grid()->tiles().front().controller->columnLabelFont().pointSizeF();

    QTest::keyClick(window_.get(), Qt::Key_Plus, Qt::ControlModifier);
    QVERIFY(mode->fontScale() > PresentationMode::kDefaultScale);
    QVERIFY(QApplication::font().pointSizeF() > base * 1.5 + 0.1);
    const double tickAfter =
        window_->grid()->tiles().front().controller->columnLabelFont().pointSizeF();
    QVERIFY(std::abs(tickAfter / tickBefore - PresentationMode::kStep) < 1e-6);
    QTest::keyClick(window_.get(), Qt::Key_Minus, Qt::ControlModifier);
    QTest::keyClick(window_.get(), Qt::Key_Minus, Qt::ControlModifier);
    QVERIFY(mode->fontScale() < PresentationMode::kDefaultScale);

    // The lecture's keys.
    QTest::keyClick(window_.get(), Qt::Key_H);
    QCOMPARE(headSpin->value(), 1);
    QTest::keyClick(window_.get(), Qt::Key_H, Qt::ShiftModifier);
    QCOMPARE(headSpin->value(), 0);
    QTest::keyClick(window_.get(), Qt::Key_Q);
    QCOMPARE(window_->grid()->selectedRow(), 0);
    QTest::keyClick(window_.get(), Qt::Key_Q);
    QCOMPARE(window_->grid()->selectedRow(), 1);
    QTest::keyClick(window_.get(), Qt::Key_C);
    QVERIFY(window_->document()->scene().mask.causal);
    const double divisor = engine().divisor();
    QTest::keyClick(window_.get(), Qt::Key_BracketRight);
    QVERIFY(engine().divisor() > divisor * 1.2);
    QTest::keyClick(window_.get(), Qt::Key_BracketLeft);
    QVERIFY(std::abs(engine().divisor() - divisor) < 1e-9);
    QTest::keyClick(window_.get(), Qt::Key_PageDown);
    QVERIFY(classroom()->walkthroughDock()->isVisible());
    QCOMPARE(classroom()->walkthrough()->step(), 1);
    QTest::keyClick(window_.get(), Qt::Key_PageUp);
    QCOMPARE(classroom()->walkthrough()->step(), 0);

    QTest::keyClick(window_.get(), Qt::Key_Escape);
    settle();
    QVERIFY(!mode->isActive());
    QVERIFY(!window_->isFullScreen());
    QVERIFY(tokens->isVisible());
    QCOMPARE(QApplication::font().pointSizeF(), base);
    const double tickBack =
        window_->grid()->tiles().front().controller->columnLabelFont().pointSizeF();
    QVERIFY(std::abs(tickBack * 1.5 - tickBefore) < 1e-6);
    // The chosen size is remembered for the next time.
    QTest::keyClick(window_.get(), Qt::Key_F11);
    QVERIFY(mode->fontScale() < PresentationMode::kDefaultScale);
    QTest::keyClick(window_.get(), Qt::Key_F11);
    QVERIFY(!mode->isActive());
}

// Every step shows every map it marks, whole, inside the scroll area's viewport, on a 1024x768
// projector: the grid of one head, all stages is taller than the window there, so the later
// steps must scroll.
void TestPresentation::walkthroughBringsMarkedMapsIntoView() {
    open("gpt2-style");
    window_->resize(1024, 768);
    classroom()->walkthroughDock()->show();
    settle();
    HeatmapGrid* grid = window_->grid();
    QWidget* viewport = grid->scrollArea()->viewport();
    int scrolledSteps = 0;
    for (int step = 0; step < kWalkStepCount; ++step) {
        classroom()->walkthrough()->setStep(step);
        settle();
        int expected = 0;
        for (Stage stage : walkStepStages(static_cast<WalkStep>(step)))
            expected += grid->tile(stage, grid->head()) != nullptr;
        int marked = 0;
        for (const HeatmapTile& t : grid->tiles()) {
            if (!t.controller->isHighlighted()) continue;
            ++marked;
            QWidget* plot = t.controller->widget();
            const QRect onViewport(plot->mapTo(viewport, QPoint(0, 0)), plot->size());
            QVERIFY2(viewport->rect().contains(onViewport),
                     qPrintable(QStringLiteral("step %1, %2: (%3, %4) %5x%6, viewport %7x%8")
                                    .arg(step)
                                    .arg(t.controller->title())
                                    .arg(onViewport.x())
                                    .arg(onViewport.y())
                                    .arg(onViewport.width())
                                    .arg(onViewport.height())
                                    .arg(viewport->width())
                                    .arg(viewport->height())));
        }
        QCOMPARE(marked, expected);
        scrolledSteps += grid->scrollArea()->verticalScrollBar()->value() > 0;
    }
    // Not every map fits at once: without scrolling the test would have failed.
    QVERIFY(grid->scrollArea()->verticalScrollBar()->maximum() > 0);
    QVERIFY(scrolledSteps > 0);
}

// A projector's 1024 x 768 with twelve tokens: every map keeps all twelve labels on both axes
// and its numbers, at presentation's text size.
void TestPresentation::presentationKeepsLabelsAndNumbersFor12Tokens() {
    Scene scene = io::loadPreset(QStringLiteral("default"));
    scene.tokens = {"The",   "students", "watch",    "the", "projector", "while",
                    "their", "teacher",  "explains", "how", "attention", "works"};
    MatrixD embeddings(12, scene.dModel());
    embeddings << scene.embeddings, scene.embeddings.colwise().reverse() * 0.7;
    scene.embeddings = embeddings;
    window_->document()->resetScene(scene);
    window_->findChild<QAction*>(QStringLiteral("viewAllHeadsAction"))->trigger();
    settle();
    QTest::keyClick(window_.get(), Qt::Key_F11);
    QVERIFY(classroom()->presentation()->isActive());
    // The offscreen platform's full screen is its own size: the projector's is set by hand.
    window_->setWindowState(Qt::WindowNoState);
    window_->setGeometry(0, 0, 1024, 768);
    settle();
    QCOMPARE(window_->size(), QSize(1024, 768));
    HeatmapGrid* grid = window_->grid();
    QVERIFY(grid->presentationLayout());
    QCOMPARE(grid->tiles().size(), size_t(5));
    const double presentedSize = QApplication::font().pointSizeF();
    for (int pass = 0; pass < 3; ++pass) {
        for (const HeatmapTile& t : grid->tiles())
            t.controller->replotNow();
    }
    for (const HeatmapTile& t : grid->tiles()) {
        HeatmapController* c = t.controller;
        const QString name = c->title();
        QCOMPARE(c->rows(), 12);
        QVERIFY2(c->rowLabelStep() == 1, qPrintable(name));
        QVERIFY2(c->columnLabelStep() == 1, qPrintable(name));
        QCOMPARE(int(c->shownColumnLabels().size()), 12);
        QCOMPARE(int(c->shownRowLabels().size()), 12);
        for (const QFont& font : {c->columnLabelFont(), c->rowLabelFont()})
            QVERIFY(font.pointSizeF() >= presentedSize * 0.9 - 1e-9);
        QVERIFY2(c->numbersDrawn(), qPrintable(name));
        // One map is never taller than the screen: its labels are never below the edge.
        QVERIFY2(c->widget()->height() <= grid->scrollArea()->viewport()->height(),
                 qPrintable(QStringLiteral("%1: %2 high, viewport %3")
                                .arg(name)
                                .arg(c->widget()->height())
                                .arg(grid->scrollArea()->viewport()->height())));
        // Square cells.
        const QPointF a = c->cellCenter(0, 0), b = c->cellCenter(1, 1);
        QVERIFY2(
            std::abs(std::abs(b.x() - a.x()) - std::abs(b.y() - a.y())) <= 1.5,
            qPrintable(
                QStringLiteral("%1: %2 x %3").arg(name).arg(b.x() - a.x()).arg(b.y() - a.y())));
    }
    // One colour bar for the grid (weights: the same 0..1 everywhere) and none per map.
    QVERIFY(grid->sharedColorBarShown());
    for (const HeatmapTile& t : grid->tiles())
        QVERIFY(!t.controller->colorScaleShown());
    QTest::keyClick(window_.get(), Qt::Key_Escape);
    settle();
    QVERIFY(!grid->presentationLayout());
    QVERIFY(!grid->sharedColorBarShown());
}

// Out again: the same window state (docks and their sizes), the same geometry, every widget's
// font and every map's fonts as they were, also after the text was enlarged in between and a map
// was shown alone.
void TestPresentation::leavingPresentationRestoresTheLayout() {
    window_->resize(1280, 800);
    classroom()->walkthroughDock()->show();
    settle();
    const QByteArray state = window_->saveState();
    const QRect geometry = window_->geometry();
    std::map<QDockWidget*, QSize> docks;
    // A dock behind another's tab keeps whatever size it last had: only the shown ones count.
    const auto behindATab = [this](QDockWidget* dock) {
        for (QTabBar* bar : window_->findChildren<QTabBar*>()) {
            for (int i = 0; i < bar->count(); ++i) {
                if (bar->tabText(i) == dock->windowTitle() && i != bar->currentIndex()) return true;
            }
        }
        return false;
    };
    for (QDockWidget* d : window_->findChildren<QDockWidget*>()) {
        if (d->isVisible() && !behindATab(d)) docks[d] = d->size();
    }
    std::map<QWidget*, double> fonts;
    for (QWidget* w : window_->findChildren<QWidget*>())
        fonts[w] = w->font().pointSizeF();
    const std::map<const QObject*, double> ticks = axisTickLabelSizes(window_.get());
    QVERIFY(docks.size() >= 3);

    QTest::keyClick(window_.get(), Qt::Key_F11);
    settle();
    QTest::keyClick(window_.get(), Qt::Key_Plus, Qt::ControlModifier);
    QTest::keyClick(window_.get(), Qt::Key_Z);
    settle();
    QVERIFY(window_->grid()->enlargedTile() >= 0);
    QTest::keyClick(window_.get(), Qt::Key_Escape);
    settle();

    QVERIFY(!classroom()->presentation()->isActive());
    QCOMPARE(window_->grid()->enlargedTile(), -1);
    QCOMPARE(window_->geometry(), geometry);
    QCOMPARE(window_->saveState(), state);
    for (const auto& [dock, size] : docks)
        QVERIFY2(dock->isVisible() && !behindATab(dock) && dock->size() == size,
                 qPrintable(QStringLiteral("%1: %2x%3, was %4x%5")
                                .arg(dock->objectName())
                                .arg(dock->width())
                                .arg(dock->height())
                                .arg(size.width())
                                .arg(size.height())));
    for (const auto& [widget, size] : fonts) {
        QVERIFY2(qFuzzyCompare(widget->font().pointSizeF(), size),
                 qPrintable(QStringLiteral("%1 %2: %3, was %4")
                                .arg(QString::fromLatin1(widget->metaObject()->className()))
                                .arg(widget->objectName())
                                .arg(widget->font().pointSizeF())
                                .arg(size)));
    }
    const std::map<const QObject*, double> ticksAfter = axisTickLabelSizes(window_.get());
    for (const auto& [axis, size] : ticks) {
        QVERIFY(ticksAfter.count(axis) == 1);
        QVERIFY(qFuzzyCompare(ticksAfter.at(axis), size));
    }
}

// Ctrl+plus grows the walkthrough's heading, formula and text, the neuron view and the
// comparisons' own fonts as it grows the maps', even where they set a size of their own.
void TestPresentation::presentationTextGrowsInTheClassroomViews() {
    classroom()->walkthroughDock()->show();
    classroom()->neuronDock()->show();
    QDialog* three = classroom()->projectionComparison();
    three->show();
    settle();
    QList<QWidget*> views = {classroom()->walkthrough(), classroom()->neuronView(), three};
    std::map<QWidget*, double> before;
    // What carries the text: labels, buttons, check boxes, tables.
    for (QWidget* view : views) {
        for (QWidget* w : view->findChildren<QWidget*>()) {
            if (qobject_cast<QLabel*>(w) || qobject_cast<QPushButton*>(w) ||
                qobject_cast<QCheckBox*>(w) || qobject_cast<QAbstractItemView*>(w)) {
                before[w] = w->font().pointSizeF();
            }
        }
    }
    auto* heading =
        classroom()->walkthrough()->findChild<QLabel*>(QStringLiteral("walkthroughHeading"));
    QVERIFY(heading && heading->testAttribute(Qt::WA_SetFont));
    QAction* larger = window_->findChild<QAction*>(QStringLiteral("largerTextAction"));
    larger->trigger();
    larger->trigger();
    settle();
    const double factor = classroom()->presentation()->fontScale();
    QVERIFY(factor > 1.3);
    int grown = 0;
    for (const auto& [w, size] : before) {
        if (size <= 0) continue;
        QVERIFY2(std::abs(w->font().pointSizeF() / size - factor) < 1e-6,
                 qPrintable(QStringLiteral("%1 %2: %3 -> %4")
                                .arg(QString::fromLatin1(w->metaObject()->className()))
                                .arg(w->objectName())
                                .arg(size)
                                .arg(w->font().pointSizeF())));
        ++grown;
    }
    QVERIFY(grown > 10);
    window_->findChild<QAction*>(QStringLiteral("resetTextAction"))->trigger();
    settle();
    for (const auto& [w, size] : before)
        QVERIFY(qFuzzyCompare(w->font().pointSizeF(), size));
    three->hide();
}

void TestPresentation::noDuplicateShortcuts() {
    // Every dialog exists, so its actions (if any) count too.
    classroom()->gallery();
    classroom()->scalingPlot();
    classroom()->projectionComparison();
    classroom()->positionsComparison();
    classroom()->showShortcuts();
    std::map<QString, QString> owner;
    int keys = 0;
    for (QAction* a : window_->findChildren<QAction*>()) {
        for (const QKeySequence& k : a->shortcuts()) {
            const QString key = k.toString(QKeySequence::PortableText);
            const auto [it, fresh] = owner.emplace(key, a->text());
            QVERIFY2(
                fresh,
                qPrintable(
                    QStringLiteral("%1 is both “%2” and “%3”").arg(key, it->second, a->text())));
            ++keys;
        }
    }
    QVERIFY(keys >= 25);
}

void TestPresentation::shortcutsDialogListsEveryAction() {
    window_->findChild<QAction*>(QStringLiteral("shortcutsAction"))->trigger();
    QDialog* dialog = classroom()->shortcutsDialog();
    QVERIFY(dialog && dialog->isVisible());
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    QSet<QString> listed;
    for (int r = 0; r < table->rowCount(); ++r)
        listed << table->item(r, 0)->text() + QLatin1Char('|') + table->item(r, 1)->text();
    int withKeys = 0;
    for (QAction* a : window_->findChildren<QAction*>()) {
        if (a->shortcuts().isEmpty()) continue;
        ++withKeys;
        QStringList keys;
        for (const QKeySequence& k : a->shortcuts())
            keys << k.toString(QKeySequence::NativeText);
        QString text = a->text().remove(QLatin1Char('&'));
        if (text.endsWith(QStringLiteral("…"))) text.chop(1);
        const QString row = keys.join(QStringLiteral(", ")) + QLatin1Char('|') + text;
        QVERIFY2(listed.contains(row), qPrintable(row));
    }
    QCOMPARE(table->rowCount(), withKeys);
}

QTEST_MAIN(TestPresentation)
#include "test_presentation.moc"
