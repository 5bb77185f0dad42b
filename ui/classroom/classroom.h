#pragma once
// Everything for teaching with the explorer, added to a main window from outside so the window's
// own code stays small: the examples gallery, the guided walkthrough, the neuron view, pin and
// compare (docks), the what-if comparisons (Explain menu), presentation mode and its keys (View
// menu) and Help › Keyboard shortcuts, which is generated from the window's actions.
//
// Keys: the F-keys and Ctrl+plus/minus/0 always work. The single keys that drive a lecture
// (PageDown/PageUp, H, Q, C, [, ], Escape) are enabled only in presentation mode, where no editor
// is shown; elsewhere they would steal typing and table navigation from the editors.

#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>

class QAction;
class QDialog;
class QDockWidget;
class QMainWindow;
class QMenu;
class QSpinBox;
class QWidget;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class HeatmapGrid;
}  // namespace ae::plot

namespace ae::ui {

class ExamplesGallery;
class NeuronView;
class PinCompareView;
class PositionsComparison;
class PresentationMode;
class ProjectionComparison;
class RotaryView;
class ScalingPlot;
class WalkthroughPanel;

struct ShortcutEntry {
    QString keys;    // every sequence of the action, in the platform's words
    QString action;  // its text, without mnemonics
    QString where;   // its menu, or "window" for actions only reachable by key
    QString when;    // "always" or "presentation mode"
};
// Every action of `window` (and its docks and dialogs) that has a shortcut, by menu.
QList<ShortcutEntry> collectShortcuts(QWidget* window);

class Classroom : public QObject {
    Q_OBJECT
public:
    // Adds its docks, menus and keys to `window`, which shows `document` in `grid`; `headSpin`
    // is the window's choice of head, which the classroom views follow and the keys step.
    Classroom(QMainWindow* window, document::AttentionDocument* document, plot::HeatmapGrid* grid,
              QSpinBox* headSpin);

    WalkthroughPanel* walkthrough() const { return walkthrough_; }
    QDockWidget* walkthroughDock() const { return walkthroughDock_; }
    NeuronView* neuronView() const { return neuron_; }
    QDockWidget* neuronDock() const { return neuronDock_; }
    PinCompareView* pinCompare() const { return pin_; }
    QDockWidget* pinDock() const { return pinDock_; }
    PresentationMode* presentation() const { return presentation_; }
    // Created on first use.
    ExamplesGallery* gallery();
    ProjectionComparison* projectionComparison();
    ScalingPlot* scalingPlot();
    PositionsComparison* positionsComparison();
    RotaryView* rotaryView();
    QDialog* shortcutsDialog() const { return shortcuts_; }

    // The gallery on the very first start only (a QSettings flag); runExplorerWindow calls it,
    // never the window's constructor, so tests and scripts never meet a dialog.
    void showGalleryOnFirstStart();

public slots:
    void showGallery();
    void showShortcuts();

signals:
    // A scene picked in the examples gallery: the window opens it as File › Open preset does.
    void presetRequested(const QString& name);
    // A built-in model picked in the gallery (builtin:NAME): opened as File › Open built-in
    // model does.
    void modelRequested(const QString& location);
    // A workbench experiment picked in the gallery (document/workbench_presets.h).
    void workbenchPresetRequested(const QString& name);

private:
    void createDocks();
    void createActions();
    QAction* addAction(QMenu* menu, const QString& name, const QString& text,
                       const QList<QKeySequence>& keys, bool presentationOnly = false);
    void showDialog(QDialog* dialog);
    // The "Why…" views, as a dock would: they answer the window's keys when they have the
    // keyboard, open without taking it, and make way for presentation mode (hidden while it
    // lasts, back after).
    void showWhyView(QDialog* view);
    QList<QDialog*> whyViews() const;
    void stepHead(int delta);
    void stepQuery(int delta);
    void nudgeDivisor(double factor);
    void toggleCausal();
    int currentHead() const;

    QMainWindow* window_;
    document::AttentionDocument* document_;
    plot::HeatmapGrid* grid_;
    QSpinBox* headSpin_;
    WalkthroughPanel* walkthrough_ = nullptr;
    QDockWidget* walkthroughDock_ = nullptr;
    NeuronView* neuron_ = nullptr;
    QDockWidget* neuronDock_ = nullptr;
    PinCompareView* pin_ = nullptr;
    QDockWidget* pinDock_ = nullptr;
    PresentationMode* presentation_;
    ExamplesGallery* gallery_ = nullptr;
    ProjectionComparison* projection_ = nullptr;
    ScalingPlot* scaling_ = nullptr;
    PositionsComparison* positions_ = nullptr;
    RotaryView* rotary_ = nullptr;
    QList<QPointer<QDialog>> whyHiddenForPresentation_;
    QDialog* shortcuts_ = nullptr;
    QList<QAction*> presentationKeys_;
};

}  // namespace ae::ui
