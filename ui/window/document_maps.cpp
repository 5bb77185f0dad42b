#include "ui/window/document_maps.h"

#include "document/attention_document.h"
#include "plot/cell_explanation.h"
#include "plot/heatmap_grid.h"

namespace ae::ui {

DocumentMaps::DocumentMaps(document::AttentionDocument* document, plot::HeatmapGrid* grid)
    : QObject(grid), document_(document), grid_(grid) {
    connect(document_, &document::AttentionDocument::structureChanged, grid_,
            &plot::HeatmapGrid::markStructureChanged);
    connect(document_, &document::AttentionDocument::resultsChanged, this,
            &DocumentMaps::showResults);
    connect(document_, &document::AttentionDocument::progressChanged, grid_,
            [this] { grid_->setComputing(true); });
    connect(document_, &document::AttentionDocument::computingChanged, grid_,
            [this](bool computing) {
                if (!computing) grid_->setComputing(false);
            });
    connect(grid_, &plot::HeatmapGrid::maskCellClicked, this, &DocumentMaps::toggleMaskCell);
    if (!document_->scene().tokens.empty()) showResults();
}

void DocumentMaps::showResults() {
    if (!document_->errorText().isEmpty()) {
        grid_->showError(document_->errorText());
        return;
    }
    grid_->showResults(&document_->engine());
}

void DocumentMaps::toggleMaskCell(int query, int key) {
    // The latest scene, not the one the maps show: an edit may still be computing.
    const Scene& scene = document_->scene();
    Mask mask = scene.mask;
    if (plot::hiddenByFixedMask(mask, query, key)) {
        Mask fixed = mask;
        fixed.allowed.reset();
        emit statusMessage(tr("Query %1 → key %2 stays hidden: %3.")
                               .arg(query)
                               .arg(key)
                               .arg(plot::maskReasons(fixed, query, key).join(tr(", "))));
        return;
    }
    if (!mask.allowed)
        mask.allowed = BoolMatrix::Constant(scene.queryCount(), scene.keyCount(), true);
    bool& allowed = (*mask.allowed)(query, key);
    allowed = !allowed;
    emit statusMessage(allowed ? tr("Query %1 may see key %2 again.").arg(query).arg(key)
                               : tr("Query %1 no longer sees key %2.").arg(query).arg(key));
    document_->setMask(mask);
}

}  // namespace ae::ui
