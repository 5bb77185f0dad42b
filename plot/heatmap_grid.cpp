#include "plot/heatmap_grid.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>
#include <limits>
#include <map>

#include "core/value_weighting.h"
#include "plot/cell_explanation.h"
#include "plot/heatmap_controller.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

bool isKeyValueStage(Stage stage) {
    return stage == Stage::Key || stage == Stage::Value;
}

// How many query heads read each kv head (1 unless grouped-query).
int groupSize(const Scene& scene) {
    return scene.heads / scene.keyValueHeads();
}

// "kv head 1 (heads 2–3)": the K or V map a group of heads shares; empty unless grouped.
QString keyValueGroupLabel(const Scene& scene, int head) {
    const int size = groupSize(scene);
    if (size == 1) return {};
    const int kv = scene.keyValueHeadOf(head);
    return QObject::tr("kv head %1 (heads %2–%3)").arg(kv).arg(kv * size).arg(kv * size + size - 1);
}

// The title colour of the maps of kv group `kv`: Okabe–Ito colours dark enough for text on white
// (yellow and sky blue are not), in turn; the "kv n" in the title tells them apart in greyscale.
QColor keyValueGroupColor(int kv) {
    static const QColor colors[] = {QColor(0x00, 0x72, 0xb2), QColor(0xd5, 0x5e, 0x00),
                                    QColor(0x00, 0x9e, 0x73), QColor(0xcc, 0x79, 0xa7)};
    return colors[kv % 4];
}

QStringList tokenLabels(const std::vector<std::string>& tokens) {
    QStringList labels;
    for (const std::string& t : tokens)
        labels << QString::fromStdString(t);
    return labels;
}

QStringList indexLabels(int count) {
    QStringList labels;
    for (int i = 0; i < count; ++i)
        labels << QString::number(i);
    return labels;
}

// Largest |value|, for a colour range symmetric about 0; 1 for an all-zero matrix.
double maxAbs(const EngineF::ConstBlock& m) {
    const double a = m.size() ? static_cast<double>(m.cwiseAbs().maxCoeff()) : 0.0;
    return std::isfinite(a) && a > 0.0 ? a : 1.0;
}

// H_i = -Σ_j w_ij log2 w_ij in bits; 0·log 0 counts as 0 (masked keys, fully masked rows).
// Lq x Lk -> Lq. In float on SIMD lanes (a scalar log2 per cell was a tenth of a repaint at
// L = 512): w·log(max(w, FLT_MIN)) is exactly 0 for w = 0, so no select is needed, and the sum
// of a row in float is good to about 1e-6 relative, far below the two decimals shown.
std::vector<double> rowEntropyBits(const EngineF::ConstBlock& weights) {
    std::vector<double> bits(static_cast<size_t>(weights.rows()), 0.0);
    const float bitsPerNat = static_cast<float>(1.0 / std::log(2.0));
    for (Eigen::Index i = 0; i < weights.rows(); ++i) {
        const auto w = weights.row(i).array();
        const float nats = -(w * w.max(std::numeric_limits<float>::min()).log()).sum();
        bits[static_cast<size_t>(i)] = static_cast<double>(nats * bitsPerNat);
    }
    return bits;
}

}  // namespace

HeatmapGrid::HeatmapGrid(QWidget* parent) : QWidget(parent) {
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(0);
    banner_ = new QLabel(this);
    banner_->setObjectName(QStringLiteral("errorBanner"));
    banner_->setWordWrap(true);
    banner_->setStyleSheet(QStringLiteral(
        "QLabel { background: #b71c1c; color: white; font-weight: bold; padding: 8px; }"));
    banner_->hide();
    note_ = new QLabel(this);
    note_->setWordWrap(true);
    note_->setStyleSheet(QStringLiteral("QLabel { background: #fff3c4; padding: 4px; }"));
    note_->hide();
    computing_ =
        new QLabel(tr("Computing… the maps show the previous results until it is done."), this);
    computing_->setObjectName(QStringLiteral("computingNote"));
    computing_->setStyleSheet(
        QStringLiteral("QLabel { background: #e3f2fd; color: #0d47a1; padding: 4px; }"));
    computing_->hide();
    scroll_ = new QScrollArea(this);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    canvas_ = new QWidget;
    layout_ = new QGridLayout(canvas_);
    layout_->setContentsMargins(4, 4, 4, 4);
    layout_->setSpacing(6);
    scroll_->setWidget(canvas_);
    scroll_->viewport()->installEventFilter(this);
    // Presentation mode's one colour bar for every map, right of the scroll area so it stays in
    // view while the maps scroll.
    sharedBar_ = new QCustomPlot(this);
    sharedBar_->setObjectName(QStringLiteral("sharedColorBar"));
    sharedBar_->plotLayout()->clear();
    sharedScale_ = new QCPColorScale(sharedBar_);
    sharedScale_->setType(QCPAxis::atRight);
    useSameDecimalsTicks(sharedScale_->axis());
    sharedBar_->plotLayout()->addElement(0, 0, sharedScale_);
    sharedBar_->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Expanding);
    sharedBar_->hide();
    auto* maps = new QHBoxLayout;
    maps->setContentsMargins(0, 0, 0, 0);
    maps->setSpacing(0);
    maps->addWidget(scroll_, 1);
    maps->addWidget(sharedBar_);
    outer->addWidget(banner_);
    outer->addWidget(note_);
    outer->addWidget(computing_);
    outer->addLayout(maps, 1);
}

// Nothing to show before the first results, or while the engine's stages are not all valid.
bool HeatmapGrid::canShow() const {
    return engine_ && !engine_->scene().tokens.empty() && error_.isEmpty();
}

QString HeatmapGrid::errorBanner() const {
    return banner_->isHidden() ? QString() : banner_->text();
}

HeatmapController* HeatmapGrid::tile(Stage stage, int head) const {
    for (const HeatmapTile& t : tiles_) {
        if (t.stage == stage && (t.meanOverHeads ? -1 : t.head) == head) return t.controller;
    }
    // K and V of a grouped layer: the group's one map serves every head in it.
    if (engine_ && isKeyValueStage(stage) && head >= 0 && head < engine_->heads()) {
        const Scene& scene = engine_->scene();
        for (const HeatmapTile& t : tiles_) {
            if (t.stage == stage && !t.meanOverHeads &&
                scene.keyValueHeadOf(t.head) == scene.keyValueHeadOf(head))
                return t.controller;
        }
    }
    return nullptr;
}

void HeatmapGrid::showResults(const EngineF* engine) {
    engine_ = engine;
    error_.clear();
    banner_->hide();
    if (!canShow()) return;
    if (structurePending_) {
        rebuild();
    } else {
        refill();
    }
}

void HeatmapGrid::markStructureChanged() {
    structurePending_ = true;
}

void HeatmapGrid::showError(const QString& message) {
    error_ = message;
    banner_->setText(
        tr("Cannot compute this: %1. The maps show the last valid results.").arg(message));
    banner_->show();
}

void HeatmapGrid::setComputing(bool computing) {
    computing_->setVisible(computing);
}

void HeatmapGrid::rebuild() {
    structurePending_ = false;
    const EngineF& engine = *engine_;
    const int heads = engine.heads();
    head_ = std::clamp(head_, 0, heads - 1);
    if (selectedRow_ >= engine.scene().queryCount()) selectedRow_ = -1;
    if (!stageAvailable(engine, stage_)) stage_ = Stage::Weights;

    std::vector<HeatmapTile> wanted;
    QString note;
    if (mode_ == ViewMode::AllHeads) {
        if (!isPerHead(stage_)) {
            wanted.push_back({nullptr, stage_, 0, false});
        } else {
            const int shown = std::min(heads, kMaxTiles);
            // Grouped-query attention: K and V have one map per kv head (shown as its group's
            // first query head), not one per query head.
            const int step = isKeyValueStage(stage_) ? groupSize(engine.scene()) : 1;
            for (int h = 0; h < shown; h += step)
                wanted.push_back({nullptr, stage_, h, false});
            if (stage_ == Stage::Weights && heads > 1) wanted.push_back({nullptr, stage_, 0, true});
            if (shown < heads) {
                note =
                    tr("Showing heads 0–%1 of %2. Use View › One head, all stages to see any head.")
                        .arg(shown - 1)
                        .arg(heads);
            }
        }
    } else {
        for (int s = 0; s < kStageCount; ++s) {
            const Stage stage = static_cast<Stage>(s);
            if (stageAvailable(engine, stage)) wanted.push_back({nullptr, stage, head_, false});
        }
    }
    note_->setText(note);
    note_->setVisible(!note.isEmpty());

    // Plots are reused: creating one costs far more than refilling it.
    while (pool_.size() < wanted.size()) {
        auto* controller = new HeatmapController(canvas_);
        controller->setPooling(pooling_);
        const size_t index = pool_.size();
        connect(controller, &HeatmapController::cellHovered, this, [this, index](int r, int c) {
            if (index < tiles_.size()) hovered(tiles_[index], r, c);
        });
        connect(controller, &HeatmapController::cellClicked, this, [this, index](int r, int c) {
            lastUsed_ = static_cast<int>(index);
            if (index < tiles_.size()) clicked(tiles_[index], r, c);
        });
        // Presentation sizes tiles from what the plots spend round their cells, known after
        // their layout: once that settles, arrange again (nothing moves if nothing changed).
        connect(controller, &HeatmapController::chromeChanged, this, [this] {
            if (!presentation_ || arrangePending_) return;
            arrangePending_ = true;
            QTimer::singleShot(0, this, [this] {
                arrangePending_ = false;
                if (arrangeTiles()) revealHighlighted();
            });
        });
        connect(controller, &HeatmapController::focused, this,
                [this, index] { lastUsed_ = static_cast<int>(index); });
        connect(controller, &HeatmapController::enlargeRequested, this, [this, index] {
            if (index < tiles_.size()) setEnlargedTile(static_cast<int>(index));
        });
        connect(controller, &HeatmapController::cursorMoved, this, [this, index](int r, int c) {
            if (index >= tiles_.size()) return;
            hovered(tiles_[index], r, c);
            // The explanation a pointer would get, beside the keyboard's cell.
            QCustomPlot* plot = tiles_[index].controller->plot();
            const QPointF centre = tiles_[index].controller->cellCenter(r, c);
            if (plot->isVisible() && !plot->toolTip().isEmpty()) {
                QToolTip::showText(plot->mapToGlobal(centre.toPoint()), plot->toolTip(), plot);
            }
        });
        pool_.push_back(controller);
    }
    for (size_t i = 0; i < pool_.size(); ++i) {
        layout_->removeWidget(pool_[i]->plot());
        pool_[i]->plot()->setVisible(i < wanted.size());
    }
    tiles_ = wanted;
    enlarged_ = -1;
    if (lastUsed_ >= static_cast<int>(tiles_.size())) lastUsed_ = -1;
    for (size_t i = 0; i < tiles_.size(); ++i) {
        tiles_[i].controller = pool_[i];
        pool_[i]->restartLayout();
        configureTile(tiles_[i]);
    }
    refill();
    arrangedColumns_ = 0;
    arrangeTiles();
}

QString HeatmapGrid::weightsName() const {
    return valueWeighted_ ? tr("value-weighted") : stageName(Stage::Weights);
}

EngineF::ConstBlock HeatmapGrid::weightsOf(int head) const {
    if (valueWeighted_) {
        const auto found = weighedMaps_.find(head);
        if (found != weighedMaps_.end()) return EngineF::ConstBlock(found->second);
    }
    return engine_->weights(head);
}

void HeatmapGrid::configureTile(const HeatmapTile& tile) {
    const EngineF& engine = *engine_;
    const auto stageTitle = [this](Stage stage) {
        return stage == Stage::Weights ? weightsName() : stageName(stage);
    };
    const Scene& scene = engine.scene();
    HeatmapController* c = tile.controller;
    QString title;
    const QString group = keyValueGroupLabel(scene, tile.head);
    if (tile.meanOverHeads) {
        title = valueWeighted_ ? tr("mean over %1 heads · value-weighted").arg(engine.heads())
                               : tr("mean over %1 heads").arg(engine.heads());
    } else if (isKeyValueStage(tile.stage) && !group.isEmpty()) {
        // One map serves the whole group: named by its kv head and the heads that read it.
        title = tr("%1 · %2").arg(stageName(tile.stage), group);
    } else if (mode_ == ViewMode::AllHeads && isPerHead(tile.stage)) {
        title = tr("head %1 · %2").arg(tile.head).arg(stageTitle(tile.stage));
    } else {
        title = isPerHead(tile.stage)
                    ? tr("%1 · head %2").arg(stageTitle(tile.stage)).arg(tile.head)
                    : tr("%1 (all heads)").arg(stageTitle(tile.stage));
    }
    // Heads that read the same keys say so: "head 2 · weights · kv 1".
    if (!tile.meanOverHeads && isPerHead(tile.stage) && !isKeyValueStage(tile.stage) &&
        scene.keyValueHeads() != scene.heads)
        title += tr(" · kv %1").arg(scene.keyValueHeadOf(tile.head));
    c->setTitle(titlePrefix_ + title);
    c->setTitleColor(tile.meanOverHeads || !isPerHead(tile.stage) || group.isEmpty()
                         ? QColor(Qt::black)
                         : keyValueGroupColor(scene.keyValueHeadOf(tile.head)));
    const QString rowTitle = rowsAreKeys(tile.stage) ? tr("key") : tr("query");
    c->setAxisTitles(rowTitle, isAttentionMatrix(tile.stage) ? tr("key") : tr("dimension"));
    const QStringList rows =
        tokenLabels(rowsAreKeys(tile.stage) ? scene.keyTokens() : scene.tokens);
    if (isAttentionMatrix(tile.stage)) {
        c->setLabels(rows, tokenLabels(scene.keyTokens()), true);
    } else {
        const int width = static_cast<int>(stageMatrix(engine, tile.stage, tile.head).cols());
        c->setLabels(rows, indexLabels(width), false);
    }
    const bool probabilities = tile.stage == Stage::Weights;
    c->setGradient(colorGradient(probabilities ? weightsMap_ : signedMap_));
    c->setShowValues(showValues_);
    c->setColumnGroupWidth(tile.stage == Stage::Concat && engine.heads() > 1 ? engine.dHead() : 0);
    c->setSelectedRow(rowsAreKeys(tile.stage) ? -1 : selectedRow_);
    c->setHighlighted(highlighted_.contains(tile.stage) && !tile.meanOverHeads);
    c->setSquareCells(presentation_);
}

void HeatmapGrid::refill() {
    if (!canShow()) return;
    const EngineF& engine = *engine_;
    bool needMean = false;
    for (const HeatmapTile& t : tiles_)
        needMean = needMean || t.meanOverHeads;
    // Value-weighted: only the heads a map shows (the mean reads every head), each once.
    weighedMaps_.clear();
    valueNorms_.clear();
    if (valueWeighted_) {
        // Refused before allocating: one more map a head shown (and a double copy while made),
        // on top of what the window holds for the scene.
        const Scene& scene = engine.scene();
        int shownHeads = 0;
        for (const HeatmapTile& t : tiles_)
            if (t.stage == Stage::Weights)
                shownHeads = t.meanOverHeads ? engine.heads() : shownHeads + 1;
        try {
            checkFitsInMemory(windowBytes(scene) + std::min(shownHeads, engine.heads()) *
                                                       static_cast<double>(scene.queryCount()) *
                                                       scene.keyCount() * (sizeof(float) + 8),
                              "the value-weighted maps");
        } catch (const SceneError& e) {
            valueWeighted_ = false;
            for (const HeatmapTile& t : tiles_)
                if (t.stage == Stage::Weights) configureTile(t);
            emit statusMessage(QString::fromStdString(e.what()));
            emit valueWeightedChanged(false);
        }
    }
    if (valueWeighted_) {
        const Scene& scene = engine.scene();
        const int dHead = engine.dHead();
        for (const HeatmapTile& t : tiles_) {
            if (t.stage != Stage::Weights) continue;
            for (int h = t.meanOverHeads ? 0 : t.head;
                 h < (t.meanOverHeads ? engine.heads() : t.head + 1); ++h) {
                if (weighedMaps_.count(h)) continue;
                const ops::RowMajorMatrix<double> none;
                const Eigen::RowVectorXd norms = valueOutputNorms(
                    engine.headValue(h).cast<double>(),
                    engine.hasOutput() ? ops::RowMajorMatrix<double>(
                                             scene.projections.output.middleRows(h * dHead, dHead))
                                       : none);
                weighedMaps_.emplace(h, valueWeightedMap<float>(engine.weights(h), norms));
                valueNorms_.emplace(h, norms);
            }
        }
    }
    if (needMean) {
        meanWeights_ = weightsOf(0);
        for (int h = 1; h < engine.heads(); ++h)
            meanWeights_ += weightsOf(h);
        meanWeights_ /= static_cast<float>(engine.heads());
    }
    // The sliding window's own hatching: built once per mask, shared by every map.
    const Mask& mask = engine.scene().mask;
    const int queries = engine.scene().queryCount(), keys = engine.scene().keyCount();
    if (!mask.window) {
        outsideWindow_ = BoolMatrix();
    } else if (mask.window != outsideWindowOf_.window || mask.causal != outsideWindowOf_.causal ||
               outsideWindow_.rows() != queries || outsideWindow_.cols() != keys) {
        outsideWindow_ = slidingWindowCells(mask, queries, keys);
        outsideWindowOf_ = {mask.causal, mask.window};
    }
    // Copying, pooling and the entropies are most of a repaint's work at L >= 512 and touch only
    // each map's own data, so the maps are filled on every core; ranges (which emit signals),
    // entropy strips (which lay out) and replots stay on this thread.
    const int count = static_cast<int>(tiles_.size());
    std::vector<TileNumbers> numbers(tiles_.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < count; ++i)
        numbers[static_cast<size_t>(i)] = fillNumbers(tiles_[static_cast<size_t>(i)]);
    std::map<Stage, double> sharedMaxima;  // per stage, over every head, computed once
    for (int i = 0; i < count; ++i) {
        const HeatmapTile& t = tiles_[static_cast<size_t>(i)];
        HeatmapController* c = t.controller;
        if (t.stage == Stage::Weights) {
            c->setDataRange(0.0, 1.0);
            c->setRowEntropy(
                showEntropy_ ? numbers[static_cast<size_t>(i)].entropyBits : std::vector<double>(),
                std::log2(static_cast<double>(c->columns())));
        } else {
            double m = numbers[static_cast<size_t>(i)].maxAbs;
            if (sharedRange_ && isPerHead(t.stage)) {
                auto found = sharedMaxima.find(t.stage);
                if (found == sharedMaxima.end()) {
                    double all = 0.0;
                    for (int h = 0; h < engine.heads(); ++h)
                        all = std::max(all, maxAbs(stageMatrix(engine, t.stage, h)));
                    found = sharedMaxima.emplace(t.stage, all).first;
                }
                m = std::max(m, found->second);
            }
            c->setDataRange(-m, m);
            c->setRowEntropy({}, 0.0);
        }
        c->replot();
    }
    updateSharedBar();
}

HeatmapGrid::TileNumbers HeatmapGrid::fillNumbers(const HeatmapTile& tile) {
    const EngineF& engine = *engine_;
    HeatmapController* c = tile.controller;
    const EngineF::ConstBlock matrix = tile.meanOverHeads ? EngineF::ConstBlock(meanWeights_)
                                       : tile.stage == Stage::Weights
                                           ? weightsOf(tile.head)
                                           : stageMatrix(engine, tile.stage, tile.head);
    c->setMatrix(matrix);
    if (isAttentionMatrix(tile.stage)) {
        c->setAllowed(engine.allowed(), outsideWindow_);
    } else {
        c->setAllowed(BoolMatrix());
    }
    if (tile.stage == Stage::Weights) return {rowEntropyBits(matrix), 1.0};
    return {{}, maxAbs(matrix)};
}

void HeatmapGrid::hovered(const HeatmapTile& tile, int row, int column) {
    QCustomPlot* plot = tile.controller->plot();
    if (row < 0 || !canShow()) {
        plot->setToolTip(QString());
        return;
    }
    const EngineF& engine = *engine_;
    QString text;
    if (valueWeighted_ && tile.stage == Stage::Weights) {
        text = tile.meanOverHeads
                   ? tr("Query %1 ← key %2\nMean value-weighted share over %3 heads: %4")
                         .arg(row)
                         .arg(column)
                         .arg(engine.heads())
                         .arg(meanWeights_(row, column), 0, 'f', 4)
                   : explainValueWeighted(tile.head, row, column);
    } else {
        text = tile.meanOverHeads ? explainMeanWeight(engine, row, column)
                                  : explainCell(engine, tile.stage, tile.head, row, column);
    }
    if (maskEdit_ && isAttentionMatrix(tile.stage)) {
        text += hiddenByFixedMask(engine.scene().mask, row, column)
                    ? tr("\nMask editing: this pair stays hidden (causal, window or padding).")
                    : tr("\nMask editing: click to hide or show this pair.");
    }
    plot->setToolTip(text);
    if (QToolTip::isVisible()) QToolTip::showText(QCursor::pos(), text, plot);
}

QString HeatmapGrid::explainValueWeighted(int head, int row, int column) const {
    const auto norms = valueNorms_.find(head);
    if (norms == valueNorms_.end()) return {};
    const double alpha = engine_->weights(head)(row, column);
    const double f = norms->second(column);
    double sum = 0;
    for (Eigen::Index j = 0; j < norms->second.size(); ++j)
        sum += engine_->weights(head)(row, j) * norms->second(j);
    const QString size = engine_->hasOutput() ? tr("‖v·W_O‖") : tr("‖v‖");
    return tr("Query %1 ← key %2, head %3\nValue-weighted share: %4\n= α · %5 / Σ over keys "
              "= %6 × %7 / %8\nThe share of what the head moves into this query that comes "
              "from this key (Kobayashi et al. 2020).")
        .arg(row)
        .arg(column)
        .arg(head)
        .arg(weightsOf(head)(row, column), 0, 'f', 4)
        .arg(size)
        .arg(alpha, 0, 'f', 4)
        .arg(f, 0, 'g', 4)
        .arg(sum, 0, 'g', 4);
}

void HeatmapGrid::clicked(const HeatmapTile& tile, int row, int column) {
    if (maskEdit_ && isAttentionMatrix(tile.stage)) {
        emit maskCellClicked(row, column);
    } else if (!rowsAreKeys(tile.stage)) {
        setSelectedRow(row == selectedRow_ ? -1 : row);
    }
}

void HeatmapGrid::setViewMode(ViewMode mode) {
    if (mode == mode_) return;
    mode_ = mode;
    structurePending_ = true;
    if (canShow()) rebuild();
}

void HeatmapGrid::setStage(Stage stage) {
    if (stage == stage_) return;
    stage_ = stage;
    if (mode_ == ViewMode::AllHeads) {
        structurePending_ = true;
        if (canShow()) rebuild();
    }
}

void HeatmapGrid::setHead(int head) {
    if (head == head_) return;
    head_ = head;
    if (mode_ == ViewMode::AllStages) {
        structurePending_ = true;
        if (canShow()) rebuild();
    }
}

GridView HeatmapGrid::view() const {
    return {mode_,        stage_,      head_,        weightsMap_,  signedMap_,
            sharedRange_, showValues_, selectedRow_, showEntropy_, valueWeighted_};
}

void HeatmapGrid::setView(const GridView& view) {
    mode_ = view.mode;
    stage_ = view.stage;
    head_ = view.head;
    weightsMap_ = view.weightsMap;
    signedMap_ = view.signedMap;
    sharedRange_ = view.sharedRange;
    showValues_ = view.showValues;
    selectedRow_ = view.selectedRow;
    showEntropy_ = view.showEntropy;
    valueWeighted_ = view.valueWeighted;
    structurePending_ = true;
    if (canShow()) rebuild();
    emit selectedRowChanged(selectedRow_);
}

void HeatmapGrid::setWeightsMap(ColorMap map) {
    weightsMap_ = map;
    for (const HeatmapTile& t : tiles_) {
        if (t.stage == Stage::Weights) {
            t.controller->setGradient(colorGradient(map));
            t.controller->replot();
        }
    }
    updateSharedBar();
}

void HeatmapGrid::setSignedMap(ColorMap map) {
    signedMap_ = map;
    for (const HeatmapTile& t : tiles_) {
        if (t.stage != Stage::Weights) {
            t.controller->setGradient(colorGradient(map));
            t.controller->replot();
        }
    }
    updateSharedBar();
}

void HeatmapGrid::setSharedRange(bool shared) {
    sharedRange_ = shared;
    refill();
}

void HeatmapGrid::setPooling(Pooling pooling) {
    pooling_ = pooling;
    for (HeatmapController* c : pool_) {
        c->setPooling(pooling);
        c->replot();
    }
}

void HeatmapGrid::setShowValues(bool show) {
    showValues_ = show;
    for (const HeatmapTile& t : tiles_) {
        t.controller->setShowValues(show);
        t.controller->replot();
    }
}

void HeatmapGrid::setShowEntropy(bool show) {
    if (show == showEntropy_) return;
    showEntropy_ = show;
    refill();
    arrangedColumns_ = 0;
    arrangeTiles();
}

void HeatmapGrid::setValueWeighted(bool on) {
    if (on == valueWeighted_) return;
    valueWeighted_ = on;
    if (!canShow()) return;
    for (const HeatmapTile& t : tiles_)
        if (t.stage == Stage::Weights) configureTile(t);
    refill();
}

void HeatmapGrid::setMaskEditMode(bool on) {
    maskEdit_ = on;
}

void HeatmapGrid::setHighlightedStages(const QList<Stage>& stages) {
    highlighted_ = stages;
    for (const HeatmapTile& t : tiles_) {
        t.controller->setHighlighted(stages.contains(t.stage) && !t.meanOverHeads);
        t.controller->replot();
    }
}

void HeatmapGrid::restyle() {
    if (!canShow()) return;
    for (const HeatmapTile& t : tiles_)
        configureTile(t);
    refill();
    arrangedColumns_ = 0;
    arrangeTiles();
}

void HeatmapGrid::setSelectedRow(int row) {
    if (row == selectedRow_) return;
    selectedRow_ = row;
    for (const HeatmapTile& t : tiles_) {
        t.controller->setSelectedRow(rowsAreKeys(t.stage) ? -1 : row);
        t.controller->replot();
    }
    emit selectedRowChanged(row);
}

}  // namespace ae::plot
