#include "ui/window/stale_click_guard.h"

#include <QCoreApplication>
#include <QInputEvent>
#include <algorithm>

namespace ae::ui {

StaleClickGuard::StaleClickGuard(QObject* parent) : QObject(parent) {
    QCoreApplication::instance()->installEventFilter(this);
}

StaleClickGuard::~StaleClickGuard() {
    if (QCoreApplication::instance()) QCoreApplication::instance()->removeEventFilter(this);
}

void StaleClickGuard::dropClicksDuring(qint64 milliseconds) {
    dropFrom_ = lastInput_;
    dropUntil_ = lastInput_ + static_cast<unsigned long>(std::max<qint64>(0, milliseconds));
}

bool StaleClickGuard::eventFilter(QObject* watched, QEvent* event) {
    switch (event->type()) {
        case QEvent::MouseButtonPress:
        case QEvent::MouseButtonRelease:
        case QEvent::MouseButtonDblClick: {
            // Dropped at its first offer (the window), an event reaches no widget.
            const unsigned long stamp = static_cast<QInputEvent*>(event)->timestamp();
            if (stamp > dropFrom_ && stamp <= dropUntil_) {
                ++dropped_;
                return true;
            }
            lastInput_ = std::max(lastInput_, stamp);
            break;
        }
        case QEvent::KeyPress:
            lastInput_ =
                std::max(lastInput_,
                         static_cast<unsigned long>(static_cast<QInputEvent*>(event)->timestamp()));
            break;
        default:
            break;
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace ae::ui
