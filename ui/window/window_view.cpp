// The window's view state as a scene file's free-form `view` object (docs/scene-format.md lists
// the keys), so a teacher's file opens exactly as it was prepared. Kept apart from
// main_window.cpp: it is the one place that knows the key names.

#include <QAction>
#include <QActionGroup>
#include <QComboBox>
#include <QDockWidget>
#include <QJsonObject>
#include <QSpinBox>
#include <QTabWidget>
#include <QToolBar>

#include "document/attention_document.h"
#include "plot/heatmap_grid.h"
#include "plot/model_view.h"
#include "ui/window/main_window.h"

namespace ae::ui {
namespace {

const QLatin1String kAllHeads("all_heads"), kAllStages("all_stages");
const QLatin1String kModelTab("model"), kExplorerTab("explorer"), kWorkbenchTab("workbench");

// Through the panel's own toggle action, so the View menu's check marks stay true.
void showPanel(QAction* toggle, bool shown) {
    if (toggle->isChecked() != shown) toggle->trigger();
}

}  // namespace

QJsonObject MainWindow::viewState() const {
    QJsonObject view;
    view[QLatin1String("mode")] = allStages_->isChecked() ? kAllStages : kAllHeads;
    view[QLatin1String("stage")] = plot::stageKey(grid_->stage());
    view[QLatin1String("head")] = grid_->head();
    view[QLatin1String("query")] =
        grid_->selectedRow() >= 0 ? QJsonValue(grid_->selectedRow()) : QJsonValue();
    if (const QAction* colour = colourGroup_->checkedAction())
        view[QLatin1String("colour_map")] = colour->data().toString();
    view[QLatin1String("shared_range")] = sharedRange_->isChecked();
    view[QLatin1String("values")] = showValues_->isChecked();
    view[QLatin1String("value_weighted")] = valueWeighted_->isChecked();
    QJsonObject panels;
    for (const QDockWidget* dock : {controlsDock_, tokensDock_, weightsDock_})
        panels[dock->objectName().chopped(4)] = dock->toggleViewAction()->isChecked();
    panels[QLatin1String("toolbar")] = toolBar_->toggleViewAction()->isChecked();
    view[QLatin1String("panels")] = panels;
    // With a model open: which of the two tabs is in front.
    if (centralWidget() == centre_)
        view[QLatin1String("tab")] = centre_->currentWidget() == modelView_ ? kModelTab
                                     : centre_->currentWidget() == grid_    ? kExplorerTab
                                                                            : kWorkbenchTab;
    return view;
}

// Free-form means forgiving: a key that is missing or of the wrong type leaves that part of the
// view as it is.
void MainWindow::applyViewState(const QJsonObject& view) {
    const QString mode = view[QLatin1String("mode")].toString();
    if (mode == kAllHeads) allHeads_->setChecked(true);
    if (mode == kAllStages) allStages_->setChecked(true);
    if (const std::optional<Stage> stage =
            plot::stageFromKey(view[QLatin1String("stage")].toString()))
        stageCombo_->setCurrentIndex(static_cast<int>(*stage));
    if (view[QLatin1String("head")].isDouble())
        headSpin_->setValue(view[QLatin1String("head")].toInt());
    for (QAction* colour : colourGroup_->actions()) {
        if (colour->data().toString() == view[QLatin1String("colour_map")].toString())
            colour->trigger();
    }
    if (view[QLatin1String("shared_range")].isBool())
        sharedRange_->setChecked(view[QLatin1String("shared_range")].toBool());
    if (view[QLatin1String("values")].isBool())
        showValues_->setChecked(view[QLatin1String("values")].toBool());
    if (view[QLatin1String("value_weighted")].isBool())
        valueWeighted_->setChecked(view[QLatin1String("value_weighted")].toBool());
    const QJsonValue query = view[QLatin1String("query")];
    if (query.isNull() || query.isDouble()) {
        const int row = query.isDouble() ? query.toInt() : -1;
        grid_->setSelectedRow(row < document_->scene().queryCount() ? row : -1);
    }
    const QJsonObject panels = view[QLatin1String("panels")].toObject();
    for (QDockWidget* dock : {controlsDock_, tokensDock_, weightsDock_}) {
        const QJsonValue shown = panels[dock->objectName().chopped(4)];
        if (shown.isBool()) showPanel(dock->toggleViewAction(), shown.toBool());
    }
    // The tab shows once the model has opened (in the background), or now if it is open.
    const QString tab = view[QLatin1String("tab")].toString();
    if (tab == kModelTab || tab == kExplorerTab || tab == kWorkbenchTab) {
        requestedTab_ = tab;
        if (centralWidget() == centre_) showRequestedTab();
    }
    if (panels[QLatin1String("toolbar")].isBool())
        showPanel(toolBar_->toggleViewAction(), panels[QLatin1String("toolbar")].toBool());
}

bool MainWindow::explorerRequested() const {
    return requestedTab_ == kExplorerTab;
}

void MainWindow::showRequestedTab() {
    QWidget* workbenchTab = centre_->widget(centre_->count() - 1);
    centre_->setCurrentWidget(requestedTab_ == kExplorerTab    ? static_cast<QWidget*>(grid_)
                              : requestedTab_ == kWorkbenchTab ? workbenchTab
                                                               : modelView_);
    requestedTab_.clear();
}

}  // namespace ae::ui
