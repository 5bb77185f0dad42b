#include "ui/classroom/classroom.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDockWidget>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "document/attention_document.h"
#include "plot/heatmap_grid.h"
#include "ui/classroom/comparison_views.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/classroom/neuron_view.h"
#include "ui/classroom/rotary_view.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/editors/controls_panel.h"
#include "ui/window/presentation_mode.h"

namespace ae::ui {
namespace {

const char* const kGalleryShownKey = "classroom/galleryShown";
const char* const kModeProperty = "aeShortcutMode";
// One nudge of the divisor: a tenth of a decade, the scaling slider's ten steps.
const double kDivisorStep = std::pow(10.0, 0.1);

QMenu* findMenu(QMenuBar* bar, const QString& title) {
    for (QAction* a : bar->actions()) {
        if (a->menu() && a->menu()->title() == title) return a->menu();
    }
    return nullptr;
}

QString plainText(QString text) {
    text.replace(QStringLiteral("&&"), QStringLiteral("\x01"));
    text.remove(QLatin1Char('&'));
    text.replace(QStringLiteral("\x01"), QStringLiteral("&"));
    if (text.endsWith(QStringLiteral("…"))) text.chop(1);
    return text;
}

}  // namespace

QList<ShortcutEntry> collectShortcuts(QWidget* window) {
    QList<ShortcutEntry> entries;
    for (QAction* a : window->findChildren<QAction*>()) {
        if (a->shortcuts().isEmpty()) continue;
        QStringList keys;
        for (const QKeySequence& k : a->shortcuts())
            keys << k.toString(QKeySequence::NativeText);
        QString where = QObject::tr("window");
        for (QObject* o : a->associatedObjects()) {
            if (auto* menu = qobject_cast<QMenu*>(o)) {
                where = plainText(menu->title());
                break;
            }
        }
        const bool presentation =
            a->property(kModeProperty).toString() == QLatin1String("presentation");
        entries.append({keys.join(QStringLiteral(", ")), plainText(a->text()), where,
                        presentation ? QObject::tr("presentation mode") : QObject::tr("always")});
    }
    std::stable_sort(
        entries.begin(), entries.end(),
        [](const ShortcutEntry& a, const ShortcutEntry& b) { return a.where < b.where; });
    return entries;
}

Classroom::Classroom(QMainWindow* window, document::AttentionDocument* document,
                     plot::HeatmapGrid* grid, QSpinBox* headSpin)
    : QObject(window),
      window_(window),
      document_(document),
      grid_(grid),
      headSpin_(headSpin),
      presentation_(new PresentationMode(window)) {
    // Side docks keep their corners: the neuron view and pin and compare sit under the maps,
    // the walkthrough stays full height beside them.
    window->setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
    window->setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    createDocks();
    createActions();
    connect(headSpin_, &QSpinBox::valueChanged, this, [this](int head) {
        neuron_->setHead(head);
        pin_->setHead(head);
        walkthrough_->refresh();
        if (projection_) projection_->setHead(head);
        if (positions_) positions_->setHead(head);
        if (rotary_) rotary_->setHead(head);
    });
    connect(grid_, &plot::HeatmapGrid::selectedRowChanged, this, [this](int row) {
        if (row >= 0) neuron_->setQuery(row);
        if (row >= 0 && rotary_) rotary_->setQuery(row);
    });
    connect(neuron_, &NeuronView::queryChanged, grid_, &plot::HeatmapGrid::setSelectedRow);
    connect(presentation_, &PresentationMode::fontsChanged, this, [this] {
        grid_->restyle();
        walkthrough_->refresh();
        neuron_->refresh();
        pin_->refresh();
    });
}

void Classroom::createDocks() {
    walkthrough_ = new WalkthroughPanel(document_, grid_);
    walkthroughDock_ = new QDockWidget(tr("Guided walkthrough"), window_);
    walkthroughDock_->setObjectName(QStringLiteral("walkthroughDock"));
    walkthroughDock_->setWidget(walkthrough_);
    window_->addDockWidget(Qt::RightDockWidgetArea, walkthroughDock_);
    walkthroughDock_->hide();
    connect(walkthroughDock_->toggleViewAction(), &QAction::toggled, walkthrough_,
            &WalkthroughPanel::setActive);
    connect(walkthrough_, &WalkthroughPanel::allStagesViewRequested, this, [this] {
        if (auto* a = window_->findChild<QAction*>(QStringLiteral("viewAllStagesAction")))
            a->setChecked(true);
    });

    neuron_ = new NeuronView(document_);
    neuronDock_ = new QDockWidget(tr("Neuron view: one query, every key"), window_);
    neuronDock_->setObjectName(QStringLiteral("neuronDock"));
    neuronDock_->setWidget(neuron_);
    window_->addDockWidget(Qt::BottomDockWidgetArea, neuronDock_);
    neuronDock_->hide();

    pin_ = new PinCompareView(document_);
    pinDock_ = new QDockWidget(tr("Pin and compare"), window_);
    pinDock_->setObjectName(QStringLiteral("pinDock"));
    pinDock_->setWidget(pin_);
    window_->addDockWidget(Qt::BottomDockWidgetArea, pinDock_);
    window_->tabifyDockWidget(neuronDock_, pinDock_);
    pinDock_->hide();
}

QAction* Classroom::addAction(QMenu* menu, const QString& name, const QString& text,
                              const QList<QKeySequence>& keys, bool presentationOnly) {
    auto* a = new QAction(text, window_);
    a->setObjectName(name);
    a->setShortcuts(keys);
    if (presentationOnly) {
        a->setProperty(kModeProperty, QStringLiteral("presentation"));
        a->setEnabled(false);
        presentationKeys_ << a;
    }
    menu->addAction(a);
    return a;
}

void Classroom::createActions() {
    QMenuBar* bar = window_->menuBar();
    QMenu* explain = new QMenu(tr("E&xplain"), bar);
    QMenu* view = findMenu(bar, QStringLiteral("&View"));
    QMenu* file = findMenu(bar, QStringLiteral("&File"));
    if (!view) view = bar->addMenu(tr("&View"));
    bar->addMenu(explain);
    QMenu* help = bar->addMenu(tr("&Help"));

    QAction* examples = addAction(explain, QStringLiteral("examplesAction"), tr("&Examples…"),
                                  {QKeySequence(Qt::Key_F2)});
    connect(examples, &QAction::triggered, this, &Classroom::showGallery);
    if (file) {
        QAction* before = nullptr;
        for (QAction* a : file->actions()) {
            if (a->isSeparator()) {
                before = a;
                break;
            }
        }
        file->insertAction(before, examples);
    }
    explain->addSeparator();

    QAction* walk = walkthroughDock_->toggleViewAction();
    walk->setText(tr("Guided &walkthrough"));
    walk->setShortcut(QKeySequence(Qt::Key_F3));
    explain->addAction(walk);
    QAction* nextStep = addAction(explain, QStringLiteral("nextStepAction"), tr("&Next step"),
                                  {QKeySequence(Qt::Key_PageDown)}, true);
    QAction* backStep = addAction(explain, QStringLiteral("previousStepAction"),
                                  tr("&Previous step"), {QKeySequence(Qt::Key_PageUp)}, true);
    const auto ensureWalkthrough = [this] {
        if (walkthroughDock_->isHidden()) walkthroughDock_->show();
    };
    connect(nextStep, &QAction::triggered, this, [this, ensureWalkthrough] {
        ensureWalkthrough();
        walkthrough_->next();
    });
    connect(backStep, &QAction::triggered, this, [this, ensureWalkthrough] {
        ensureWalkthrough();
        walkthrough_->back();
    });
    QAction* neuron = neuronDock_->toggleViewAction();
    neuron->setText(tr("N&euron view"));
    neuron->setShortcut(QKeySequence(Qt::Key_F4));
    explain->addAction(neuron);
    explain->addSeparator();
    // F5 shows and hides the view (pinning the first time only); re-pinning is its own action,
    // so looking again never silently replaces what the class pinned.
    QAction* pin = pinDock_->toggleViewAction();
    pin->setObjectName(QStringLiteral("pinAction"));
    pin->setText(tr("&Pin and compare"));
    pin->setShortcut(QKeySequence(Qt::Key_F5));
    explain->addAction(pin);
    connect(pin, &QAction::toggled, this, [this](bool shown) {
        if (!shown) return;
        if (!pin_->hasPin()) pin_->pin();
        pinDock_->raise();
    });
    QAction* repin =
        addAction(explain, QStringLiteral("repinAction"), tr("&Re-pin current weights"),
                  {QKeySequence(Qt::SHIFT | Qt::Key_F5)});
    connect(repin, &QAction::triggered, this, [this] {
        pin_->pin();
        pinDock_->show();
        pinDock_->raise();
    });
    QAction* three = addAction(explain, QStringLiteral("threeMatricesAction"),
                               tr("Why three &matrices?"), {QKeySequence(Qt::Key_F6)});
    connect(three, &QAction::triggered, this, [this] { showWhyView(projectionComparison()); });
    QAction* sqrtDk = addAction(explain, QStringLiteral("sqrtDkAction"), tr("Why √d_&k?"),
                                {QKeySequence(Qt::Key_F7)});
    connect(sqrtDk, &QAction::triggered, this, [this] { showWhyView(scalingPlot()); });
    QAction* positions = addAction(explain, QStringLiteral("positionsAction"),
                                   tr("Why p&ositions?"), {QKeySequence(Qt::Key_F8)});
    connect(positions, &QAction::triggered, this, [this] { showWhyView(positionsComparison()); });
    QAction* rotary = addAction(explain, QStringLiteral("rotaryAction"),
                                tr("Why &rotary positions?"), {QKeySequence(Qt::Key_F10)});
    connect(rotary, &QAction::triggered, this, [this] { showWhyView(rotaryView()); });

    view->addSeparator();
    QAction* present = addAction(view, QStringLiteral("presentationAction"),
                                 tr("&Presentation mode"), {QKeySequence(Qt::Key_F11)});
    present->setCheckable(true);
    QAction* leave = addAction(view, QStringLiteral("leavePresentationAction"),
                               tr("Leave presentation mode"), {QKeySequence(Qt::Key_Escape)}, true);
    connect(present, &QAction::toggled, presentation_, &PresentationMode::setActive);
    connect(leave, &QAction::triggered, present, [present] { present->setChecked(false); });
    QAction* larger =
        addAction(view, QStringLiteral("largerTextAction"), tr("&Larger text"),
                  {QKeySequence(Qt::CTRL | Qt::Key_Plus), QKeySequence(Qt::CTRL | Qt::Key_Equal)});
    QAction* smaller = addAction(view, QStringLiteral("smallerTextAction"), tr("S&maller text"),
                                 {QKeySequence(Qt::CTRL | Qt::Key_Minus)});
    QAction* reset = addAction(view, QStringLiteral("resetTextAction"), tr("&Reset text size"),
                               {QKeySequence(Qt::CTRL | Qt::Key_0)});
    connect(larger, &QAction::triggered, presentation_, &PresentationMode::enlarge);
    connect(smaller, &QAction::triggered, presentation_, &PresentationMode::shrink);
    connect(reset, &QAction::triggered, presentation_, &PresentationMode::resetScale);
    QAction* contrast = addAction(view, QStringLiteral("highContrastAction"),
                                  tr("&High-contrast theme"), {QKeySequence(Qt::Key_F9)});
    contrast->setCheckable(true);
    connect(contrast, &QAction::toggled, presentation_, &PresentationMode::setHighContrast);

    QMenu* keys = view->addMenu(tr("Presentation &keys"));
    QAction* nextHead = addAction(keys, QStringLiteral("nextHeadAction"), tr("Next head"),
                                  {QKeySequence(Qt::Key_H)}, true);
    QAction* previousHead =
        addAction(keys, QStringLiteral("previousHeadAction"), tr("Previous head"),
                  {QKeySequence(Qt::SHIFT | Qt::Key_H)}, true);
    QAction* nextQuery = addAction(keys, QStringLiteral("nextQueryAction"), tr("Next query"),
                                   {QKeySequence(Qt::Key_Q)}, true);
    QAction* previousQuery =
        addAction(keys, QStringLiteral("previousQueryAction"), tr("Previous query"),
                  {QKeySequence(Qt::SHIFT | Qt::Key_Q)}, true);
    QAction* causal = addAction(keys, QStringLiteral("causalAction"), tr("Causal mask on/off"),
                                {QKeySequence(Qt::Key_C)}, true);
    QAction* softer = addAction(keys, QStringLiteral("largerDivisorAction"),
                                tr("Larger divisor (softer weights)"),
                                {QKeySequence(Qt::Key_BracketRight)}, true);
    QAction* sharper = addAction(keys, QStringLiteral("smallerDivisorAction"),
                                 tr("Smaller divisor (sharper weights)"),
                                 {QKeySequence(Qt::Key_BracketLeft)}, true);
    connect(nextHead, &QAction::triggered, this, [this] { stepHead(1); });
    connect(previousHead, &QAction::triggered, this, [this] { stepHead(-1); });
    connect(nextQuery, &QAction::triggered, this, [this] { stepQuery(1); });
    connect(previousQuery, &QAction::triggered, this, [this] { stepQuery(-1); });
    connect(causal, &QAction::triggered, this, &Classroom::toggleCausal);
    connect(softer, &QAction::triggered, this, [this] { nudgeDivisor(kDivisorStep); });
    connect(sharper, &QAction::triggered, this, [this] { nudgeDivisor(1.0 / kDivisorStep); });
    QAction* enlargeMap =
        addAction(keys, QStringLiteral("enlargeMapAction"),
                  tr("Enlarge the current map / show all maps"), {QKeySequence(Qt::Key_Z)}, true);
    connect(enlargeMap, &QAction::triggered, grid_, &plot::HeatmapGrid::toggleEnlargeCurrent);
    QAction* entropy = new QAction(tr("&Entropy strips"), window_);
    entropy->setObjectName(QStringLiteral("entropyStripAction"));
    entropy->setCheckable(true);
    entropy->setChecked(grid_->view().showEntropy);
    view->insertAction(present, entropy);
    connect(entropy, &QAction::toggled, grid_, &plot::HeatmapGrid::setShowEntropy);
    connect(presentation_, &PresentationMode::activeChanged, this, [this, present](bool on) {
        present->setChecked(on);
        for (QAction* a : presentationKeys_)
            a->setEnabled(on);
        if (!on) grid_->setEnlargedTile(-1);
        grid_->setPresentationLayout(on);
        if (on) {
            whyHiddenForPresentation_.clear();
            for (QDialog* view : whyViews()) {
                if (!view->isVisible()) continue;
                view->hide();
                whyHiddenForPresentation_ << view;
            }
        } else {
            for (const QPointer<QDialog>& view : whyHiddenForPresentation_)
                if (view) showWhyView(view);
            whyHiddenForPresentation_.clear();
        }
    });

    QAction* shortcuts = addAction(help, QStringLiteral("shortcutsAction"),
                                   tr("&Keyboard shortcuts"), {QKeySequence(Qt::Key_F1)});
    connect(shortcuts, &QAction::triggered, this, &Classroom::showShortcuts);
}

ExamplesGallery* Classroom::gallery() {
    if (!gallery_) {
        gallery_ = new ExamplesGallery(window_);
        connect(gallery_, &ExamplesGallery::presetRequested, this, &Classroom::presetRequested);
        connect(gallery_, &ExamplesGallery::modelRequested, this, &Classroom::modelRequested);
        connect(gallery_, &ExamplesGallery::workbenchPresetRequested, this,
                &Classroom::workbenchPresetRequested);
    }
    return gallery_;
}

ProjectionComparison* Classroom::projectionComparison() {
    if (!projection_) projection_ = new ProjectionComparison(document_, window_);
    projection_->setHead(currentHead());
    return projection_;
}

ScalingPlot* Classroom::scalingPlot() {
    if (!scaling_) scaling_ = new ScalingPlot(window_);
    return scaling_;
}

PositionsComparison* Classroom::positionsComparison() {
    if (!positions_) positions_ = new PositionsComparison(document_, window_);
    positions_->setHead(currentHead());
    return positions_;
}

RotaryView* Classroom::rotaryView() {
    if (!rotary_) {
        rotary_ = new RotaryView(document_, window_);
        if (grid_->selectedRow() >= 0) rotary_->setQuery(grid_->selectedRow());
    }
    rotary_->setHead(currentHead());
    return rotary_;
}

void Classroom::showDialog(QDialog* dialog) {
    dialog->show();
    dialog->raise();
    dialog->activateWindow();
}

QList<QDialog*> Classroom::whyViews() const {
    QList<QDialog*> views;
    for (QDialog* view :
         std::initializer_list<QDialog*>{projection_, scaling_, positions_, rotary_})
        if (view) views << view;
    return views;
}

void Classroom::showWhyView(QDialog* view) {
    if (!view->property("aeWindowKeys").toBool()) {
        // The window's shortcuts fire only while the window is active: the view takes them too,
        // so F9, F11 or H work from it once clicked. Escape stays the view's own (it closes it).
        for (QAction* action : window_->findChildren<QAction*>()) {
            const QList<QKeySequence> keys = action->shortcuts();
            if (!keys.isEmpty() && !keys.contains(QKeySequence(Qt::Key_Escape)))
                view->addAction(action);
        }
        view->setProperty("aeWindowKeys", true);
        view->setAttribute(Qt::WA_ShowWithoutActivating);
    }
    view->show();
    view->raise();
    // The keyboard stays with the window, as with the docks.
    window_->activateWindow();
}

void Classroom::showGallery() {
    showDialog(gallery());
}

void Classroom::showGalleryOnFirstStart() {
    QSettings settings;
    if (settings.value(QLatin1String(kGalleryShownKey), false).toBool()) return;
    settings.setValue(QLatin1String(kGalleryShownKey), true);
    showGallery();
}

void Classroom::showShortcuts() {
    if (!shortcuts_) {
        shortcuts_ = new QDialog(window_);
        shortcuts_->setObjectName(QStringLiteral("shortcutsDialog"));
        shortcuts_->setWindowTitle(tr("Keyboard shortcuts"));
        auto* table = new QTableWidget(0, 4, shortcuts_);
        table->setObjectName(QStringLiteral("shortcutsTable"));
        table->setHorizontalHeaderLabels({tr("Keys"), tr("Action"), tr("Menu"), tr("Works")});
        table->verticalHeader()->hide();
        table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        table->horizontalHeader()->setStretchLastSection(true);
        auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, shortcuts_);
        connect(buttons, &QDialogButtonBox::rejected, shortcuts_, &QDialog::reject);
        auto* layout = new QVBoxLayout(shortcuts_);
        layout->addWidget(new QLabel(
            tr("Every key of this window, read from its actions. The single keys work in "
               "presentation mode (F11), where no editor needs them for typing."),
            shortcuts_));
        layout->addWidget(table, 1);
        layout->addWidget(buttons);
        shortcuts_->resize(720, 640);
    }
    // Generated each time: actions added since (or renamed) are listed too.
    auto* table = shortcuts_->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    const QList<ShortcutEntry> entries = collectShortcuts(window_);
    table->setRowCount(static_cast<int>(entries.size()));
    for (int r = 0; r < entries.size(); ++r) {
        const ShortcutEntry& e = entries[r];
        const QString cells[4] = {e.keys, e.action, e.where, e.when};
        for (int c = 0; c < 4; ++c)
            table->setItem(r, c, new QTableWidgetItem(cells[c]));
    }
    table->resizeColumnsToContents();
    showDialog(shortcuts_);
}

int Classroom::currentHead() const {
    return headSpin_->value();
}

void Classroom::stepHead(int delta) {
    const int heads = document_->scene().heads;
    headSpin_->setValue(((currentHead() + delta) % heads + heads) % heads);
}

void Classroom::stepQuery(int delta) {
    const int count = document_->scene().queryCount();
    if (count == 0) return;
    const int row = grid_->selectedRow();
    const int next =
        row < 0 ? (delta > 0 ? 0 : count - 1) : ((row + delta) % count + count) % count;
    grid_->setSelectedRow(next);
}

void Classroom::nudgeDivisor(double factor) {
    const double divisor = std::clamp(document_->scene().divisor() * factor,
                                      ControlsPanel::kMinDivisor, ControlsPanel::kMaxDivisor);
    document_->setScale({ScaleKind::Divisor, divisor});
}

void Classroom::toggleCausal() {
    Mask mask = document_->scene().mask;
    mask.causal = !mask.causal;
    document_->setMask(mask);
}

}  // namespace ae::ui
