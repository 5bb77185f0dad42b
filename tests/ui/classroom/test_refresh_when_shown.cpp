// RefreshWhenShown, the classroom views' shared "refresh when shown": a change redraws a visible
// view at once and a hidden one only when it is next shown, once, already visible and before the
// view's own showEvent; a redraw made meanwhile for another reason leaves nothing to catch up.

#include <QApplication>
#include <QWidget>
#include <QtTest>

#include "ui/classroom/refresh_when_shown.h"

using namespace ae::ui;

namespace {

// A view that counts its redraws and notes whether it was visible for them and whether its own
// showEvent had run yet.
class CountingView : public QWidget {
public:
    explicit CountingView(QWidget* parent = nullptr)
        : QWidget(parent), refresher(new RefreshWhenShown(this, [this] { refresh(); })) {}
    void refresh() {
        ++refreshes;
        visibleAtLastRefresh = isVisible();
        showEventsBeforeLastRefresh = showEvents;
        refresher->refreshed();
    }

    RefreshWhenShown* refresher;
    int refreshes = 0;
    int showEvents = 0;
    int showEventsBeforeLastRefresh = -1;
    bool visibleAtLastRefresh = false;

protected:
    void showEvent(QShowEvent* event) override {
        ++showEvents;
        QWidget::showEvent(event);
    }
};

}  // namespace

class TestRefreshWhenShown : public QObject {
    Q_OBJECT
private slots:
    void hiddenViewCatchesUpOnceWhenShown();
    void visibleViewRedrawsAtOnce();
    void redrawMeanwhileLeavesNothingToCatchUp();
    void childOfAHiddenWindowCatchesUpWithIt();
};

void TestRefreshWhenShown::hiddenViewCatchesUpOnceWhenShown() {
    CountingView view;
    view.refresher->changed();
    view.refresher->changed();
    view.refresher->changed();
    QCOMPARE(view.refreshes, 0);
    view.show();
    QCOMPARE(view.refreshes, 1);
    QVERIFY(view.visibleAtLastRefresh);
    QCOMPARE(view.showEventsBeforeLastRefresh, 0);  // before the view's own showEvent
    QCOMPARE(view.showEvents, 1);
    // Hidden and shown again with nothing changed: no redraw.
    view.hide();
    view.show();
    QCOMPARE(view.refreshes, 1);
}

void TestRefreshWhenShown::visibleViewRedrawsAtOnce() {
    CountingView view;
    view.show();
    QCOMPARE(view.refreshes, 0);  // nothing had changed
    view.refresher->changed();
    QCOMPARE(view.refreshes, 1);
    view.refresher->changed();
    QCOMPARE(view.refreshes, 2);
    view.hide();
    view.refresher->changed();
    QCOMPARE(view.refreshes, 2);
    view.show();
    QCOMPARE(view.refreshes, 3);
}

void TestRefreshWhenShown::redrawMeanwhileLeavesNothingToCatchUp() {
    CountingView view;
    view.refresher->changed();
    view.refresh();  // as a view's setHead redraws it, hidden or not
    QCOMPARE(view.refreshes, 1);
    view.show();
    QCOMPARE(view.refreshes, 1);
}

// A view in a dock is shown when its window is: it catches up then.
void TestRefreshWhenShown::childOfAHiddenWindowCatchesUpWithIt() {
    QWidget window;
    auto* view = new CountingView(&window);
    view->refresher->changed();
    QCOMPARE(view->refreshes, 0);
    window.show();
    QCOMPARE(view->refreshes, 1);
    QVERIFY(view->visibleAtLastRefresh);
}

QTEST_MAIN(TestRefreshWhenShown)
#include "test_refresh_when_shown.moc"
