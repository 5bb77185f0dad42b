// How the grid arranges its maps: how many columns, presentation mode's square cells and one
// colour bar for the grid, one map enlarged alone, and scrolling the marked maps into view.

#include <QGridLayout>
#include <QScrollArea>
#include <QScrollBar>
#include <QStyle>
#include <cmath>

#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

constexpr int kMinTileWidth = 220;
constexpr int kMinTileHeight = 190;

}  // namespace

int bestGridColumns(int tiles, QSize cells, QSize area) {
    // What a tile spends around its cells on titles, labels, the entropy strip and colour bar.
    constexpr double kChromeWidth = 170.0, kChromeHeight = 80.0;
    int best = 1;
    double bestSide = -1e9;
    for (int columns = 1; columns <= tiles; ++columns) {
        const int rows = (tiles + columns - 1) / columns;
        const double side =
            std::min((area.width() / double(columns) - kChromeWidth) / std::max(1, cells.width()),
                     (area.height() / double(rows) - kChromeHeight) / std::max(1, cells.height()));
        if (side > bestSide + 1e-9) {
            bestSide = side;
            best = columns;
        }
    }
    return best;
}

// As many columns as make the cells largest in the visible area. In presentation mode the cells
// must also stay large enough for their numbers and every label: when the maps cannot all be
// that large on one screen, as many columns as keep them so, one map never taller than the
// screen, and the grid scrolls.
bool HeatmapGrid::arrangeTiles() {
    const int n = static_cast<int>(tiles_.size());
    if (n == 0) return false;
    const bool alone = enlarged_ >= 0 && enlarged_ < n;
    int cellRows = 1, cellColumns = 1, readable = 0;
    QSize chrome(0, 0);
    for (const HeatmapTile& t : tiles_) {
        cellRows = std::max(cellRows, t.controller->rows());
        cellColumns = std::max(cellColumns, t.controller->columns());
        if (presentation_) {
            chrome = chrome.expandedTo(t.controller->chromeSize());
            readable = std::max(readable, t.controller->readableCellSide());
        }
    }
    // Presentation mode: the room with no scroll bar, whether one shows now or not (taken from
    // the viewport, the same view came out another size after a view whose maps scrolled than
    // when entered afresh); a scroll bar is made room for below when the maps will scroll.
    QSize area = presentation_ ? scroll_->maximumViewportSize() : scroll_->viewport()->size();
    const int scrollBar =
        scroll_->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll_);
    int best = 1;
    QSize minimum(kMinTileWidth, kMinTileHeight);
    if (alone) {
        minimum = QSize(kMinTileWidth, kMinTileHeight);
    } else if (presentation_) {
        // The cell side with `columns` columns; fitHeight: every row of maps on one screen.
        const double slack = 2.0 * layout_->spacing() + 8.0;
        const auto side = [&](int columns, bool fitHeight) {
            const int rows = (n + columns - 1) / columns;
            const double across =
                (area.width() / double(columns) - chrome.width() - slack) / cellColumns;
            const double down =
                ((fitHeight ? area.height() / double(rows) : double(area.height())) -
                 chrome.height() - slack) /
                cellRows;
            return std::min(across, down);
        };
        double bestSide = -1.0;
        for (int columns = 1; columns <= n; ++columns) {
            const double s = side(columns, true);
            if (s >= readable && s > bestSide + 1e-9) {
                bestSide = s;
                best = columns;
            }
        }
        if (bestSide >= 0.0) {
            minimum = QSize(chrome.width() + readable * cellColumns,
                            chrome.height() + readable * cellRows);
        } else {
            // The maps scroll down: the vertical scroll bar takes its width.
            area.setWidth(area.width() - scrollBar);
            for (int columns = 1; columns <= n; ++columns) {
                if (side(columns, false) >= readable) best = columns;
            }
            const int cell = std::max(readable, static_cast<int>(side(best, false)));
            minimum =
                QSize(chrome.width() + readable * cellColumns, chrome.height() + cell * cellRows);
        }
    } else {
        best = bestGridColumns(n, QSize(cellColumns, cellRows), area);
        best = std::max(1, std::min(best, std::max(1, area.width() / kMinTileWidth)));
    }
    const int key = alone ? -1 - enlarged_ : best;
    if (key == arrangedColumns_ && minimum == arrangedMinimum_) return false;
    arrangedColumns_ = key;
    arrangedMinimum_ = minimum;
    for (const HeatmapTile& t : tiles_)
        layout_->removeWidget(t.controller->plot());
    int placed = 0;
    for (int i = 0; i < n; ++i) {
        QWidget* plot = tiles_[static_cast<size_t>(i)].controller->plot();
        const bool shown = !alone || i == enlarged_;
        plot->setVisible(shown);
        if (!shown) continue;
        plot->setMinimumSize(minimum);
        layout_->addWidget(plot, placed / best, placed % best);
        ++placed;
    }
    for (int c = 0; c < layout_->columnCount(); ++c)
        layout_->setColumnStretch(c, c < best ? 1 : 0);
    const int rows = (placed + best - 1) / best;
    for (int r = 0; r < layout_->rowCount(); ++r)
        layout_->setRowStretch(r, r < rows ? 1 : 0);
    return true;
}

void HeatmapGrid::setPresentationLayout(bool on) {
    presentation_ = on;
    for (const HeatmapTile& t : tiles_)
        t.controller->setSquareCells(on);
    arrangedColumns_ = 0;
    arrangeTiles();
    updateSharedBar();
    // The maps a walkthrough step marks stay in view at the new size (entering presentation at
    // the last step showed V and the raw scores, not the concatenation and output it marks).
    revealHighlighted();
}

bool HeatmapGrid::sharedColorBarShown() const {
    return !sharedBar_->isHidden();
}

QWidget* HeatmapGrid::sharedColorBar() const {
    return sharedBar_;
}

std::optional<ValueRange> HeatmapGrid::sharedColorBarRange() const {
    QCPLayoutGrid* layout = sharedBar_->plotLayout();
    const auto* bar = layout->elementCount() == 1
                          ? qobject_cast<const QCPColorScale*>(layout->elementAt(0))
                          : nullptr;
    if (!bar) return std::nullopt;
    return ValueRange{bar->dataRange().lower, bar->dataRange().upper};
}

QString HeatmapGrid::sharedColorBarLabel() const {
    return sharedScale_->axis()->label();
}

// One bar for the grid when it says the same for every map: the same colours and the same range
// (weights always, other stages with View › Shared colour range).
void HeatmapGrid::updateSharedBar() {
    std::vector<const HeatmapTile*> shown;
    for (size_t i = 0; i < tiles_.size(); ++i) {
        if (enlarged_ < 0 || static_cast<int>(i) == enlarged_) shown.push_back(&tiles_[i]);
    }
    bool shared = presentation_ && shown.size() > 1;
    for (const HeatmapTile* t : shown) {
        const HeatmapTile& first = *shown.front();
        shared =
            shared && (t->stage == Stage::Weights) == (first.stage == Stage::Weights) &&
            t->controller->colorMap()->dataRange() == first.controller->colorMap()->dataRange();
    }
    for (const HeatmapTile& t : tiles_)
        t.controller->setColorScaleShown(!shared);
    sharedBar_->setVisible(shared);
    if (!shared) return;
    const HeatmapTile& first = *shown.front();
    sharedScale_->setGradient(
        colorGradient(first.stage == Stage::Weights ? weightsMap_ : signedMap_));
    sharedScale_->setDataRange(first.controller->colorMap()->dataRange());
    sharedScale_->axis()->setLabel(first.stage == Stage::Weights && valueWeighted_
                                       ? tr("value-weighted share")
                                       : stageName(first.stage));
    const QFontMetrics metrics(sharedScale_->axis()->tickLabelFont());
    const int bar = std::max(14, metrics.height());
    sharedScale_->setBarWidth(bar);
    // Room above and below the bar for half a label, or the end labels (0.0 and 1.0 of the
    // weights) have nowhere to go and are left out.
    sharedScale_->setMinimumMargins(QMargins(0, metrics.height(), 0, metrics.height()));
    sharedBar_->setFixedWidth(bar + metrics.horizontalAdvance(QStringLiteral("-0.00")) +
                              QFontMetrics(sharedScale_->axis()->labelFont()).height() + 40);
    sharedBar_->replot(QCustomPlot::rpQueuedReplot);
}

int HeatmapGrid::currentTile() const {
    const int n = static_cast<int>(tiles_.size());
    for (int i = 0; i < n; ++i) {
        if (tiles_[static_cast<size_t>(i)].controller->plot()->hasFocus()) return i;
    }
    if (enlarged_ >= 0 && enlarged_ < n) return enlarged_;
    if (lastUsed_ >= 0 && lastUsed_ < n) return lastUsed_;
    for (int i = 0; i < n; ++i) {
        if (tiles_[static_cast<size_t>(i)].controller->isHighlighted()) return i;
    }
    return n > 0 ? 0 : -1;
}

void HeatmapGrid::setEnlargedTile(int index) {
    const int n = static_cast<int>(tiles_.size());
    enlarged_ = (index == enlarged_ || index < 0 || index >= n) ? -1 : index;
    if (enlarged_ >= 0) lastUsed_ = enlarged_;
    arrangedColumns_ = 0;
    arrangeTiles();
    updateSharedBar();
    if (enlarged_ < 0) {
        scrollToHighlighted();
        if (lastUsed_ >= 0 && lastUsed_ < n) {
            QWidget* plot = tiles_[static_cast<size_t>(lastUsed_)].controller->plot();
            QTimer::singleShot(0, plot, [this, plot] { scroll_->ensureWidgetVisible(plot, 0, 0); });
        }
    }
}

void HeatmapGrid::toggleEnlargeCurrent() {
    setEnlargedTile(enlarged_ >= 0 ? -1 : currentTile());
}

void HeatmapGrid::revealHighlighted() {
    // After the layout the step's switch of mode started: the tiles' places are not known yet.
    QTimer::singleShot(0, this, &HeatmapGrid::scrollToHighlighted);
}

// The smallest scroll that shows every marked map; the top ones first when they cannot all be
// in view at once.
void HeatmapGrid::scrollToHighlighted() {
    layout_->activate();
    QRect marked;
    for (const HeatmapTile& t : tiles_) {
        QWidget* plot = t.controller->plot();
        if (t.controller->isHighlighted() && !plot->isHidden()) marked |= plot->geometry();
    }
    if (marked.isEmpty()) return;
    QScrollBar* bar = scroll_->verticalScrollBar();
    const int height = scroll_->viewport()->height();
    int top = bar->value();
    if (marked.height() > height || marked.top() < top) {
        top = marked.top();
    } else if (marked.bottom() >= top + height) {
        top = marked.bottom() + 1 - height;
    }
    bar->setValue(top);
    QScrollBar* across = scroll_->horizontalScrollBar();
    const int width = scroll_->viewport()->width();
    if (marked.left() < across->value() || marked.width() > width) {
        across->setValue(marked.left());
    } else if (marked.right() >= across->value() + width) {
        across->setValue(marked.right() + 1 - width);
    }
}

bool HeatmapGrid::eventFilter(QObject* watched, QEvent* event) {
    if (watched == scroll_->viewport() && event->type() == QEvent::Resize) arrangeTiles();
    return QWidget::eventFilter(watched, event);
}

}  // namespace ae::plot
