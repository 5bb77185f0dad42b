#include "ui/classroom/refresh_when_shown.h"

#include <QEvent>
#include <QWidget>
#include <utility>

namespace ae::ui {

RefreshWhenShown::RefreshWhenShown(QWidget* view, std::function<void()> refresh)
    : QObject(view), view_(view), refresh_(std::move(refresh)) {
    view->installEventFilter(this);
}

void RefreshWhenShown::changed() {
    if (view_->isVisible()) {
        refresh_();
    } else {
        stale_ = true;
    }
}

bool RefreshWhenShown::eventFilter(QObject* watched, QEvent* event) {
    if (watched == view_ && event->type() == QEvent::Show && stale_) refresh_();
    return QObject::eventFilter(watched, event);
}

}  // namespace ae::ui
