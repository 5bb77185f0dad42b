// The window on a projector's small screen: with every panel open it still fits 1024x768, as do
// its dialogs; saved and restored geometry is brought inside the screen; Reset layout puts the
// panels back where a first start has them.

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDockWidget>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>
#include <QtTest>
#include <memory>
#include <vector>

#include "document/attention_document.h"
#include "plot/heatmap_grid.h"
#include "support/window_fixture.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/comparison_views.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/classroom/rotary_view.h"
#include "ui/files/export_dialog.h"
#include "ui/files/model_import_dialog.h"
#include "ui/screen_fit.h"
#include "ui/window/main_window.h"
#include "ui/window/presentation_mode.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::document;

class TestWindowScreen : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::startWindowTests(); }
    void init() {
        window_ = test::firstStartWindow();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        settle();
    }
    void cleanup() { window_.reset(); }
    void fitsASmallScreenWithEveryDockShown();
    void crossAttentionDoesNotGrowTheWindow();
    void dialogsFitASmallScreen();
    void rectanglesAreBroughtInsideTheScreen();
    void restoredGeometryIsClampedToTheScreen();
    void resetLayoutRestoresTheDocks();

private:
    void settle() { test::settleWindow(*window_); }
    AttentionDocument* document() const { return window_->document(); }

    std::unique_ptr<MainWindow> window_;
};

namespace {

// What the window may take of a 1024x768 projector once a taskbar has its share.
const QSize kUsableScreen(kSmallestScreen.width(), kSmallestScreen.height() - kTaskbarMargin);

bool fits(const QSize& size, const QSize& within) {
    return size.width() <= within.width() && size.height() <= within.height();
}

QString describe(const QString& what, const QSize& size) {
    return QStringLiteral("%1: %2x%3").arg(what).arg(size.width()).arg(size.height());
}

}  // namespace

// With every panel open at once (controls, tokens, weights, training, walkthrough, neuron view,
// pin and compare, model input, translation input, model in training), the window can still be made
// as small as a projector's screen.
void TestWindowScreen::fitsASmallScreenWithEveryDockShown() {
    for (const char* preset : {"default", "cross-sentences", "bert-base"}) {
        window_->openPreset(QString::fromLatin1(preset));
        const QList<QDockWidget*> docks = window_->findChildren<QDockWidget*>();
        // and the model's input, the translation's, and the model in training
        QCOMPARE(docks.size(), 10);
        for (QDockWidget* dock : docks)
            dock->show();
        settle();
        for (QDockWidget* dock : docks) {
            QVERIFY2(fits(dock->minimumSizeHint(), kUsableScreen),
                     qPrintable(describe(dock->objectName(), dock->minimumSizeHint())));
        }
        const QSize minimum = window_->minimumSizeHint();
        qInfo("%s", qPrintable(describe(QLatin1String(preset), minimum)));
        QVERIFY2(fits(minimum, kUsableScreen), qPrintable(describe(preset, minimum)));
        // The status bar's numbers are cut rather than widen the window.
        QVERIFY(window_->statusBar()->minimumSizeHint().width() < kUsableScreen.width() / 2);
    }
}

// The cross-attention example (two sequences, two token tables) used to push the window past
// the bottom of a 1024x768 screen.
void TestWindowScreen::crossAttentionDoesNotGrowTheWindow() {
    window_->showNormal();
    window_->resize(kUsableScreen);
    settle();
    QVERIFY2(fits(window_->size(), kUsableScreen), qPrintable(describe("before", window_->size())));
    window_->openPreset(QStringLiteral("cross-sentences"));
    QVERIFY(document()->scene().hasSource);
    settle();
    QVERIFY2(fits(window_->size(), kUsableScreen), qPrintable(describe("after", window_->size())));
    QVERIFY(fits(window_->minimumSizeHint(), kUsableScreen));
}

void TestWindowScreen::dialogsFitASmallScreen() {
    std::vector<std::unique_ptr<QDialog>> owned;
    owned.push_back(std::make_unique<ExportDialog>(document(), window_->grid(),
                                                   ExportDialog::Mode::Image, window_.get()));
    owned.push_back(std::make_unique<ExportDialog>(document(), window_->grid(),
                                                   ExportDialog::Mode::EveryHead, window_.get()));
    owned.push_back(std::make_unique<ExportDialog>(document(), window_->grid(),
                                                   ExportDialog::Mode::Sweep, window_.get()));
    owned.push_back(std::make_unique<ModelImportDialog>(document(), window_.get()));
    Classroom* classroom = window_->classroom();
    classroom->showShortcuts();
    QList<QDialog*> dialogs = {classroom->gallery(),     classroom->projectionComparison(),
                               classroom->scalingPlot(), classroom->positionsComparison(),
                               classroom->rotaryView(),  classroom->shortcutsDialog()};
    for (const auto& dialog : owned)
        dialogs << dialog.get();
    const QRect available = window_->screen()->availableGeometry();
    for (QDialog* dialog : dialogs) {
        dialog->show();
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        const QString name = QString::fromLatin1(dialog->metaObject()->className());
        qInfo("%s, shown at %dx%d", qPrintable(describe(name, dialog->minimumSizeHint())),
              dialog->width(), dialog->height());
        QVERIFY2(fits(dialog->minimumSizeHint(), kUsableScreen),
                 qPrintable(describe(name, dialog->minimumSizeHint())));
        // Opened no larger than the screen it is on, and on it, whatever size it asked for.
        if (fits(dialog->minimumSizeHint(), available.size())) {
            QTest::qWait(20);  // the second fit, once the frame is known
            const QRect g = dialog->frameGeometry();
            QVERIFY2(available.contains(g),
                     qPrintable(QStringLiteral("%1 at %2,%3 %4x%5 outside %6x%7")
                                    .arg(name)
                                    .arg(g.x())
                                    .arg(g.y())
                                    .arg(g.width())
                                    .arg(g.height())
                                    .arg(available.width())
                                    .arg(available.height())));
        }
        dialog->hide();
    }
}

void TestWindowScreen::rectanglesAreBroughtInsideTheScreen() {
    // A 1024x768 screen with a 40-pixel panel at the top.
    const QRect screen(0, 40, 1024, 728);
    // The old first-start size, as saved on a larger screen: shrunk, and at the top left.
    QCOMPARE(fittedInside(QRect(200, 100, 1415, 1000), screen), QRect(0, 40, 1024, 728));
    // Off the right and bottom edges: moved back, size kept.
    QCOMPARE(fittedInside(QRect(900, 700, 600, 400), screen), QRect(424, 368, 600, 400));
    // Above and left of the screen (a second monitor that is gone).
    QCOMPARE(fittedInside(QRect(-1800, -300, 800, 600), screen), QRect(0, 40, 800, 600));
    // Already inside: unchanged.
    QCOMPARE(fittedInside(QRect(10, 50, 300, 200), screen), QRect(10, 50, 300, 200));
    // A second screen to the right keeps its own coordinates.
    const QRect right(1024, 0, 1920, 1040);
    QCOMPARE(fittedInside(QRect(2800, 900, 500, 400), right), QRect(2444, 640, 500, 400));
}

void TestWindowScreen::restoredGeometryIsClampedToTheScreen() {
    const QRect available = window_->screen()->availableGeometry();
    window_.reset();
    struct Saved {
        const char* what;
        QRect geometry;
    };
    const Saved cases[] = {
        {"larger than the screen", QRect(QPoint(0, 0), available.size() * 2)},
        {"off the bottom right",
         QRect(available.bottomRight() + QPoint(200, 200), QSize(500, 400))},
        {"off the top left", QRect(available.topLeft() - QPoint(3000, 2000), QSize(600, 450))},
    };
    for (const Saved& saved : cases) {
        {
            MainWindow saver;
            saver.setGeometry(saved.geometry);
            QSettings().setValue(QStringLiteral("window/geometry"), saver.saveGeometry());
        }
        MainWindow restored;
        const QRect geometry = restored.geometry();
        QSettings().remove(QStringLiteral("window/geometry"));
        qInfo("%s: restored at %d,%d %dx%d in %d,%d %dx%d", saved.what, geometry.x(), geometry.y(),
              geometry.width(), geometry.height(), available.x(), available.y(), available.width(),
              available.height());
        QVERIFY2(available.contains(geometry), saved.what);
        // Only moved when it fits: the saved size stays.
        if (fits(saved.geometry.size(), available.size() - QSize(0, 40)))
            QCOMPARE(geometry.size(), saved.geometry.size());
    }
}

void TestWindowScreen::resetLayoutRestoresTheDocks() {
    const auto dock = [this](const char* name) {
        return window_->findChild<QDockWidget*>(QLatin1String(name));
    };
    QToolBar* toolBar = window_->findChild<QToolBar*>(QStringLiteral("viewToolBar"));
    // A layout a lesson could leave behind: controls floating, tokens on the right, weights
    // closed, the neuron view open, the toolbar hidden.
    dock("controlsDock")->setFloating(true);
    window_->addDockWidget(Qt::RightDockWidgetArea, dock("tokensDock"));
    dock("weightsDock")->hide();
    dock("neuronDock")->show();
    toolBar->hide();
    settle();

    auto* reset = window_->findChild<QAction*>(QStringLiteral("resetLayoutAction"));
    QVERIFY(reset);
    reset->trigger();
    settle();

    for (const char* name : {"controlsDock", "tokensDock", "weightsDock"}) {
        QVERIFY2(!dock(name)->isFloating(), name);
        QVERIFY2(dock(name)->isVisible(), name);
        QCOMPARE(window_->dockWidgetArea(dock(name)), Qt::LeftDockWidgetArea);
    }
    for (const char* name : {"trainingDock", "walkthroughDock", "neuronDock", "pinDock"})
        QVERIFY2(!dock(name)->isVisible(), name);
    QCOMPARE(window_->dockWidgetArea(dock("trainingDock")), Qt::RightDockWidgetArea);
    QCOMPARE(window_->dockWidgetArea(dock("walkthroughDock")), Qt::RightDockWidgetArea);
    QCOMPARE(window_->dockWidgetArea(dock("neuronDock")), Qt::BottomDockWidgetArea);
    QCOMPARE(window_->tabifiedDockWidgets(dock("tokensDock")),
             QList<QDockWidget*>{dock("weightsDock")});
    QVERIFY(!window_->tabifiedDockWidgets(dock("controlsDock")).contains(dock("tokensDock")));
    // The tokens tab is the one in front, under the controls.
    QVERIFY(dock("tokensDock")->geometry().top() > dock("controlsDock")->geometry().bottom());
    QVERIFY(!dock("tokensDock")->visibleRegion().isEmpty());
    QVERIFY(toolBar->isVisible());
    QCOMPARE(window_->toolBarArea(toolBar), Qt::TopToolBarArea);
    // The View menu's check marks follow.
    QVERIFY(dock("controlsDock")->toggleViewAction()->isChecked());
    QVERIFY(!dock("neuronDock")->toggleViewAction()->isChecked());
    // From presentation mode, which hides the panels: it ends, and the panels are back.
    PresentationMode* presentation = window_->classroom()->presentation();
    presentation->setActive(true);
    settle();
    QVERIFY(!dock("controlsDock")->isVisible());
    reset->trigger();
    settle();
    QVERIFY(!presentation->isActive());
    QVERIFY(dock("controlsDock")->isVisible());
    QVERIFY(dock("tokensDock")->isVisible());
}

QTEST_MAIN(TestWindowScreen)
#include "test_window_screen.moc"
