#pragma once
// Presentation mode, for a projector: full screen, text scaled by a chosen factor (remembered),
// the editor docks hidden, keys for everything a lecture needs. A high-contrast theme, usable in
// and out of presentation, for projectors that wash colours out.
//
// Fonts scale through the application font (every widget follows it) and, for the plots, which
// copy their fonts once, through plot/presentation_style.h; each plot remembers the factor its
// fonts were made at, so plots created while scaled are never scaled twice. Widgets given a
// font of their own (a walkthrough heading, a verdict) no longer follow the application font:
// each keeps its size at scale 1 and is set to that times the factor, so it grows with Ctrl+plus
// and comes back to exactly its size.
//
// Leaving restores the window as it was: its state (docks and their sizes) and geometry are
// saved on entering and put back after the fonts are back, so no dock keeps a width it took
// while the text was large.

#include <QByteArray>
#include <QFont>
#include <QList>
#include <QObject>
#include <QRect>

class QDockWidget;
class QMainWindow;

namespace ae::ui {

class PresentationMode : public QObject {
    Q_OBJECT
public:
    explicit PresentationMode(QMainWindow* window);

    static constexpr double kDefaultScale = 1.5;
    static constexpr double kStep = 1.15;
    static constexpr double kMinScale = 0.7;
    static constexpr double kMaxScale = 4.0;

    bool isActive() const { return active_; }
    // The text scale in effect now (1 = the application's own size).
    double fontScale() const { return applied_; }
    bool highContrast() const { return highContrast_; }

public slots:
    void setActive(bool active);
    void enlarge();
    void shrink();
    void resetScale();
    void setHighContrast(bool on);

signals:
    void activeChanged(bool active);
    // After the fonts changed: views that measured their labels measure them again.
    void fontsChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void applyScale(double factor);
    void scaleOwnFonts(double previous, double factor);
    void widenWrappingDocks();

    QMainWindow* window_;
    QFont baseFont_;
    double applied_ = 1.0;
    double normalScale_ = 1.0;
    bool active_ = false;
    bool highContrast_ = false;
    bool wasMaximized_ = false;
    bool statusBarWasShown_ = true;
    QByteArray savedState_;
    QRect savedGeometry_;
    QList<QDockWidget*> hiddenDocks_;
};

}  // namespace ae::ui
