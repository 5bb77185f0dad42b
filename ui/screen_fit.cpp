#include "ui/screen_fit.h"

#include <QDialog>
#include <QDockWidget>
#include <QEvent>
#include <QGuiApplication>
#include <QScreen>
#include <QScrollArea>
#include <QStyle>
#include <QTimer>
#include <algorithm>

namespace ae::ui {

QRect fittedInside(const QRect& rect, const QRect& available) {
    if (!available.isValid()) return rect;
    QRect fitted(rect.topLeft(), rect.size().boundedTo(available.size()));
    // Right and bottom first, then left and top: a rectangle as large as the screen ends at its
    // top-left corner, where the title bar is.
    if (fitted.right() > available.right()) fitted.moveRight(available.right());
    if (fitted.bottom() > available.bottom()) fitted.moveBottom(available.bottom());
    if (fitted.left() < available.left()) fitted.moveLeft(available.left());
    if (fitted.top() < available.top()) fitted.moveTop(available.top());
    return fitted;
}

namespace {

// Keeps a scroll area that never scrolls sideways at least as wide as its contents' minimum, which
// grows with the text (presentation mode's larger fonts): narrower, the contents were cut.
class FollowContentsMinimum : public QObject {
public:
    FollowContentsMinimum(QScrollArea* scroll, QWidget* contents)
        : QObject(scroll), scroll_(scroll), contents_(contents) {
        contents->installEventFilter(this);
        update();
    }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (watched == contents_ &&
            (event->type() == QEvent::LayoutRequest || event->type() == QEvent::FontChange))
            update();
        return QObject::eventFilter(watched, event);
    }

private:
    void update() {
        const int scrollBar =
            scroll_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll_);
        scroll_->setMinimumWidth(contents_->minimumSizeHint().width() + scrollBar);
    }

    QScrollArea* scroll_;
    QWidget* contents_;
};

}  // namespace

void makeDockScrollable(QDockWidget* dock, int widestMinimum) {
    QWidget* contents = dock->widget();
    if (!contents || qobject_cast<QScrollArea*>(contents)) return;
    auto* scroll = new QScrollArea(dock);
    scroll->setObjectName(dock->objectName() + QStringLiteral("Scroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    const bool wraps = contents->property(kWrapsToWidthProperty).toBool();
    scroll->setHorizontalScrollBarPolicy(wraps ? Qt::ScrollBarAlwaysOff : Qt::ScrollBarAsNeeded);
    scroll->setWidget(contents);
    // Narrow panels keep their width, counting the vertical scroll bar, so that a short dock
    // does not also scroll sideways; wide ones may be squeezed to `widestMinimum` and scroll.
    const int scrollBar = scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll);
    scroll->setMinimumWidth(
        std::min(contents->minimumSizeHint().width() + scrollBar, widestMinimum));
    if (wraps) new FollowContentsMinimum(scroll, contents);
    dock->setWidget(scroll);
}

QRect availableGeometryFor(const QWidget* widget) {
    const QScreen* screen = widget ? widget->screen() : nullptr;
    if (!screen) screen = QGuiApplication::primaryScreen();
    return screen ? screen->availableGeometry() : QRect();
}

void fitWindowToScreen(QWidget* window) {
    const QRect client = window->geometry(), frame = window->frameGeometry();
    QMargins margins(client.left() - frame.left(), client.top() - frame.top(),
                     frame.right() - client.right(), frame.bottom() - client.bottom());
    if (margins.isNull()) margins.setTop(window->style()->pixelMetric(QStyle::PM_TitleBarHeight));
    const QRect fitted = fittedInside(client, availableGeometryFor(window).marginsRemoved(margins));
    if (fitted != client) window->setGeometry(fitted);
}

bool DialogScreenFit::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Show) {
        auto* dialog = qobject_cast<QDialog*>(watched);
        if (dialog && dialog->isWindow()) {
            fitWindowToScreen(dialog);
            // Once shown, the window system has added its frame: fit again with the real one.
            QTimer::singleShot(0, dialog, [dialog] { fitWindowToScreen(dialog); });
        }
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace ae::ui
