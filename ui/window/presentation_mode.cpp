#include "ui/window/presentation_mode.h"

#include <QApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QStyle>
#include <QTimer>

#include "plot/presentation_style.h"
#include "ui/screen_fit.h"

namespace ae::ui {
namespace {

const char* const kScaleKey = "presentation/fontScale";
const char* const kBaseSizeProperty = "aeBasePointSize";
// The docks that edit the scene: a lecture shows results, and keys drive the rest.
const char* const kEditorDocks[] = {"tokensDock", "weightsDock", "controlsDock"};

QFont scaled(QFont font, double ratio) {
    font.setPointSizeF(font.pointSizeF() * ratio);
    return font;
}

QPalette highContrastPalette() {
    QPalette p;
    p.setColor(QPalette::Window, Qt::white);
    p.setColor(QPalette::WindowText, Qt::black);
    p.setColor(QPalette::Base, Qt::white);
    p.setColor(QPalette::AlternateBase, QColor(235, 235, 235));
    p.setColor(QPalette::Text, Qt::black);
    p.setColor(QPalette::Button, QColor(230, 230, 230));
    p.setColor(QPalette::ButtonText, Qt::black);
    p.setColor(QPalette::Highlight, QColor(0, 0, 160));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, Qt::white);
    p.setColor(QPalette::ToolTipText, Qt::black);
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(90, 90, 90));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(90, 90, 90));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(90, 90, 90));
    return p;
}

}  // namespace

PresentationMode::PresentationMode(QMainWindow* window)
    : QObject(window), window_(window), baseFont_(QApplication::font()) {
    window->installEventFilter(this);
}

bool PresentationMode::eventFilter(QObject* watched, QEvent* event) {
    if (watched == window_ && event->type() == QEvent::Resize && active_) {
        QTimer::singleShot(0, this, [this] {
            if (active_) widenWrappingDocks();
        });
    }
    return QObject::eventFilter(watched, event);
}

void PresentationMode::setActive(bool active) {
    if (active == active_) return;
    active_ = active;
    if (active) {
        wasMaximized_ = window_->isMaximized();
        savedState_ = window_->saveState();
        savedGeometry_ = window_->geometry();
        normalScale_ = applied_;
        hiddenDocks_.clear();
        for (const char* name : kEditorDocks) {
            auto* dock = window_->findChild<QDockWidget*>(QLatin1String(name));
            if (dock && dock->isVisible()) {
                dock->hide();
                hiddenDocks_ << dock;
            }
        }
        // The status bar's compute times mean nothing to a class; its line goes to the maps.
        statusBarWasShown_ = window_->statusBar()->isVisibleTo(window_);
        window_->statusBar()->hide();
        window_->showFullScreen();
        applyScale(QSettings().value(QLatin1String(kScaleKey), kDefaultScale).toDouble());
        // Once the window has its full-screen size (it comes later, from the window system),
        // and again whenever it changes while presenting: see eventFilter.
        QTimer::singleShot(0, this, [this] {
            if (active_) widenWrappingDocks();
        });
    } else {
        // Fonts first: docks shown while the text is still large would size themselves to it.
        applyScale(normalScale_);
        for (QDockWidget* dock : hiddenDocks_)
            dock->show();
        window_->statusBar()->setVisible(statusBarWasShown_);
        hiddenDocks_.clear();
        if (wasMaximized_) {
            window_->showMaximized();
        } else {
            window_->showNormal();
        }
        // The docks' minimum sizes follow the smaller fonts only once their layouts have run:
        // restored before that, the window would be held at the large text's minimum size.
        // Once more when the events of leaving full screen are through: the platform hands the
        // window back the normal geometry it grew to while the text was large.
        const auto restore = [this] {
            QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
            window_->restoreState(savedState_);
            if (!wasMaximized_) window_->setGeometry(savedGeometry_);
        };
        restore();
        QTimer::singleShot(0, this, [this, restore] {
            if (!active_) restore();
        });
    }
    emit activeChanged(active);
}

// A dock whose text wraps (the walkthrough) is given the width its contents ask for at the new
// text size: left at its normal width, the larger text ran a dozen characters to a line.
// Leaving puts the docks' sizes back with the window's state.
void PresentationMode::widenWrappingDocks() {
    QList<QDockWidget*> docks;
    QList<int> widths;
    for (QDockWidget* dock : window_->findChildren<QDockWidget*>()) {
        auto* scroll = qobject_cast<QScrollArea*>(dock->widget());
        QWidget* contents = scroll ? scroll->widget() : nullptr;
        if (!contents || !contents->property(kWrapsToWidthProperty).toBool() ||
            !dock->isVisible() || dock->isFloating())
            continue;
        docks << dock;
        widths << contents->sizeHint().width() +
                      scroll->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll);
    }
    if (!docks.isEmpty()) window_->resizeDocks(docks, widths, Qt::Horizontal);
}

void PresentationMode::enlarge() {
    applyScale(std::min(applied_ * kStep, kMaxScale));
}

void PresentationMode::shrink() {
    applyScale(std::max(applied_ / kStep, kMinScale));
}

void PresentationMode::resetScale() {
    applyScale(active_ ? kDefaultScale : 1.0);
}

void PresentationMode::applyScale(double factor) {
    if (active_) QSettings().setValue(QLatin1String(kScaleKey), factor);
    if (factor == applied_) return;
    const double previous = applied_;
    applied_ = factor;
    scaleOwnFonts(previous, factor);
    plot::scalePlotFonts(window_, previous, factor, highContrast_);
    emit fontsChanged();
}

void PresentationMode::scaleOwnFonts(double previous, double factor) {
    // Sizes at scale 1 are read before the application font changes: a widget whose font only
    // looks explicit may follow the application font and would be counted as already scaled.
    QList<QWidget*> own;
    for (QWidget* w : window_->findChildren<QWidget*>()) {
        if (!w->testAttribute(Qt::WA_SetFont) || plot::isPlot(w)) continue;
        if (!w->property(kBaseSizeProperty).isValid()) {
            const double size = w->font().pointSizeF();
            if (size <= 0.0) continue;  // a pixel size: not ours to scale
            w->setProperty(kBaseSizeProperty, size / previous);
        }
        own << w;
    }
    QApplication::setFont(scaled(baseFont_, factor));
    for (QWidget* w : own) {
        QFont font = w->font();
        font.setPointSizeF(w->property(kBaseSizeProperty).toDouble() * factor);
        w->setFont(font);
    }
}

void PresentationMode::setHighContrast(bool on) {
    highContrast_ = on;
    QApplication::setPalette(on ? highContrastPalette() : QApplication::style()->standardPalette());
    plot::setPlotsHighContrast(window_, on);
}

}  // namespace ae::ui
