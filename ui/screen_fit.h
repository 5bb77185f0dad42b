#pragma once
// Keeping the window, its docks and its dialogs on a small screen (a 1024x768 projector): a
// rectangle brought inside the available screen area, dock contents that scroll rather than push
// the window taller, and dialogs that never open larger than the screen.

#include <QObject>
#include <QRect>

class QDockWidget;
class QWidget;

namespace ae::ui {

// The smallest screen the window is laid out for, and what a taskbar or panel may take from it.
inline constexpr QSize kSmallestScreen{1024, 768};
inline constexpr int kTaskbarMargin = 48;

// `rect` shrunk to at most the size of `available` and moved (never more than needed) so that it
// lies inside it. `available` is a screen's available geometry.
QRect fittedInside(const QRect& rect, const QRect& available);

// Puts the dock's widget in a frameless scroll area: the dock can be made shorter than its
// contents (they scroll), so opening a bigger scene never makes the window grow. The scroll area
// asks for the contents' width up to `widestMinimum` pixels and scrolls beyond that.
// Contents whose text wraps to whatever width they get (the walkthrough) set this property to
// true: their scroll area never scrolls sideways, and is kept as wide as their minimum (which
// grows with the text size), however small `widestMinimum`.
inline constexpr char kWrapsToWidthProperty[] = "aeWrapsToWidth";
void makeDockScrollable(QDockWidget* dock, int widestMinimum);

// The available geometry of the screen `widget` is on (or of the primary screen).
QRect availableGeometryFor(const QWidget* widget);

// Shrinks and moves a top-level widget so that it and its frame lie inside the available area of
// its screen. Before the first show the frame is not known yet: the style's title bar height
// stands in for it.
void fitWindowToScreen(QWidget* window);

// Installed on the application: every dialog that is shown larger than its screen's available
// area (or partly off it) is shrunk and moved inside, whoever created it.
class DialogScreenFit : public QObject {
public:
    explicit DialogScreenFit(QObject* parent = nullptr) : QObject(parent) {}

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace ae::ui
