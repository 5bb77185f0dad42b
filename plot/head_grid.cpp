#include "plot/head_grid.h"

#include <QElapsedTimer>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

#include "qcustomplot.h"

namespace ae::plot {
namespace {

// Okabe-Ito: told apart by most colour-blind viewers, and none of them is in viridis's range.
const QColor kOpenColor(0xE6, 0x9F, 0x00);       // orange
const QColor kHighlightColor(0x00, 0x72, 0xB2);  // blue
const QColor kChangedColor(0xD5, 0x5E, 0x00);    // vermillion

QString number(double value) {
    return std::isnan(value) ? QStringLiteral("–") : QString::number(value, 'f', 2);
}

}  // namespace

QString headSummaryText(const ae::model::HeadSummary& s) {
    QString text = QStringLiteral("L%1 H%2").arg(s.layer).arg(s.head);
    // Each score by its key in words ("first token"), as `heads` and the CSV name it.
    for (const ae::model::HeadScore& score : ae::model::headScores()) {
        text += QStringLiteral(" · %1 %2")
                    .arg(QString::fromUtf8(score.key).replace(QLatin1Char('_'), QLatin1Char(' ')),
                         number(s.*score.value));
    }
    return text;
}

HeadGrid::HeadGrid(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setAccessibleName(tr("Layers and heads"));
}

void HeadGrid::setRun(std::shared_ptr<const ae::model::ModelRun<float>> run,
                      const QStringList& tokens,
                      std::shared_ptr<const std::vector<ae::model::LayerDigest>> valueWeighted) {
    run_ = std::move(run);
    // Value-weighted digests of another shape (a stale set) are not drawn.
    if (valueWeighted && run_ && valueWeighted->size() != run_->layers.size())
        valueWeighted.reset();
    valueWeighted_ = std::move(valueWeighted);
    tokens_ = tokens;
    keyTokens_.clear();
    cross_ = false;
    refill();
    update();
}

void HeadGrid::setCrossRun(std::shared_ptr<const ae::model::ModelRun<float>> decoderRun,
                           const QStringList& targetTokens, const QStringList& sourceTokens) {
    run_ = std::move(decoderRun);
    valueWeighted_.reset();
    tokens_ = targetTokens;
    keyTokens_ = sourceTokens;
    cross_ = true;
    refill();
    update();
}

void HeadGrid::startLayerByLayer(int layers, int heads, int tokens) {
    run_.reset();
    summaries_.clear();
    changed_.clear();
    layers_ = layers;
    heads_ = heads;
    tokenCount_ = tokens;
    keyCount_ = tokens;
    cross_ = false;
    tokens_.clear();
    keyTokens_.clear();
    pool_ = plot::poolShape(tokens, tokens, kMaxShownCells, kMaxShownCells);
    pooled_.assign(static_cast<size_t>(layers_ * heads_), {});
    ownMax_.assign(static_cast<size_t>(layers_ * heads_), 0.0);
    images_.assign(static_cast<size_t>(layers_ * heads_), QImage());
    if (current_.first >= layers_ || current_.second >= heads_) current_ = {0, 0};
    filled_ = 0;
    updateGeometry();
    update();
}

void HeadGrid::showLayerDigest(int layer, int layers, int tokens,
                               const std::vector<ae::model::HeadDigest>& heads) {
    const int headCount = static_cast<int>(heads.size());
    if (layer == 0 || filled_ < 0 || layers != layers_ || headCount != heads_ ||
        tokens != tokenCount_)
        startLayerByLayer(layers, headCount, tokens);
    if (layer < 0 || layer >= layers_) return;
    summaries_.resize(static_cast<size_t>(layers_ * heads_));
    QCPColorGradient gradient = colorGradient(colorMap_);
    for (int head = 0; head < heads_; ++head) {
        const ae::model::HeadDigest& d = heads[static_cast<size_t>(head)];
        const size_t i = static_cast<size_t>(index({layer, head}));
        pooled_[i].assign(d.pooled.begin(), d.pooled.end());
        ownMax_[i] = static_cast<double>(d.largest);
        summaries_[i] = d.summary;
    }
    // A shared range moves with every layer; each map's own does not.
    if (rangeMode_ == RangeMode::Shared) {
        recolor();
    } else {
        for (int head = 0; head < heads_; ++head)
            recolorHead(gradient, layer, head);
    }
    filled_ = std::max(filled_, layer + 1);
    update();
}

void HeadGrid::refill() {
    QElapsedTimer timer;
    timer.start();
    filled_ = -1;
    layers_ = run_ ? static_cast<int>(run_->layers.size()) : 0;
    heads_ = run_ ? run_->config.heads : 0;
    tokenCount_ = run_ ? static_cast<int>(run_->tokens.size()) : 0;
    keyCount_ = tokenCount_;
    if (cross_ && run_ && !run_->layers.empty()) {
        const auto& crossWeights = run_->layers.front().cross.weights;
        keyCount_ = crossWeights.empty() ? 0 : static_cast<int>(crossWeights.front().cols());
        // A decoder stack without cross-attention has no maps to show.
        if (crossWeights.empty()) layers_ = 0;
    }
    pool_ = plot::poolShape(tokenCount_, keyCount_, kMaxShownCells, kMaxShownCells);
    const int count = layers_ * heads_;
    // Cross-attention's first row reads every source token: no causal first row to leave out.
    const bool causal = !cross_ && run_ && run_->config.isDecoder();
    pooled_.assign(static_cast<size_t>(count), {});
    ownMax_.assign(static_cast<size_t>(count), 0.0);
    // The pass pooled each head as it made it (model::LayerDigest), before a long run dropped
    // the maps; a run made without digests (the command line's) is pooled here, the same way,
    // every head on every core.
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < count; ++i) {
        const int layer = i / heads_, head = i % heads_;
        const ae::model::LayerRecord<float>& record = run_->layers[static_cast<size_t>(layer)];
        const ae::model::HeadDigest digest =
            cross_ ? ae::model::poolHead(record.cross.weights[static_cast<size_t>(head)], false)
            : valueWeighted_
                ? (*valueWeighted_)[static_cast<size_t>(layer)].heads[static_cast<size_t>(head)]
            : record.digest.empty()
                ? ae::model::poolHead(record.weights[static_cast<size_t>(head)], causal)
                : record.digest.heads[static_cast<size_t>(head)];
        pooled_[static_cast<size_t>(index({layer, head}))].assign(digest.pooled.begin(),
                                                                  digest.pooled.end());
        ownMax_[static_cast<size_t>(index({layer, head}))] = static_cast<double>(digest.largest);
    }
    if (current_.first >= layers_ || current_.second >= heads_) current_ = {0, 0};
    recolor();
    refillMs_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

std::pair<double, double> HeadGrid::colorRange(HeadId head) const {
    const double own = ownMax_.empty() ? 1.0 : ownMax_[static_cast<size_t>(index(head))];
    const double shared = ownMax_.empty() ? 1.0 : *std::max_element(ownMax_.begin(), ownMax_.end());
    const double high = rangeMode_ == RangeMode::Shared ? shared : own;
    return {0.0, std::max(high, 1e-9)};
}

void HeadGrid::recolor() {
    const QCPColorGradient gradient = colorGradient(colorMap_);
    images_.assign(pooled_.size(), QImage());
    const int count = layers_ * heads_;
#pragma omp parallel
    {
        // Each thread its own gradient: colorize() fills the gradient's colour table when first
        // used, which is not safe to share.
        QCPColorGradient local = gradient;
#pragma omp for schedule(dynamic)
        for (int n = 0; n < count; ++n)
            recolorHead(local, n / heads_, n % heads_);
    }
}

void HeadGrid::recolorHead(QCPColorGradient& gradient, int layer, int head) {
    const size_t i = static_cast<size_t>(index({layer, head}));
    // A layer a pass has not reached yet stays blank.
    if (pooled_[i].size() != static_cast<size_t>(pool_.shownRows) * pool_.shownColumns) {
        images_[i] = QImage();
        return;
    }
    const auto [low, high] = colorRange({layer, head});
    QImage image(pool_.shownColumns, pool_.shownRows, QImage::Format_RGB32);
    for (int r = 0; r < pool_.shownRows; ++r) {
        gradient.colorize(pooled_[i].data() + static_cast<size_t>(r) * pool_.shownColumns,
                          QCPRange(low, high), reinterpret_cast<QRgb*>(image.scanLine(r)),
                          pool_.shownColumns);
    }
    images_[i] = image;
}

void HeadGrid::setSummaries(const std::vector<ae::model::HeadSummary>& summaries) {
    summaries_ = summaries;
}

void HeadGrid::setHighlighted(const std::set<HeadId>& heads) {
    if (heads == highlighted_) return;
    highlighted_ = heads;
    update();
}

void HeadGrid::setChangedHeads(const std::set<HeadId>& heads) {
    if (heads == changed_) return;
    changed_ = heads;
    update();
}

void HeadGrid::setOpenHead(std::optional<HeadId> head) {
    if (head == open_) return;
    open_ = head;
    update();
}

void HeadGrid::setRangeMode(RangeMode mode) {
    if (mode == rangeMode_) return;
    rangeMode_ = mode;
    recolor();
    update();
}

void HeadGrid::setColorMap(ColorMap map) {
    if (map == colorMap_) return;
    colorMap_ = map;
    recolor();
    update();
}

void HeadGrid::setPresentation(bool on) {
    if (on == presentation_) return;
    presentation_ = on;
    updateGeometry();
    update();
}

void HeadGrid::setCurrentHead(HeadId head) {
    if (layers_ == 0 || heads_ == 0) return;
    head.first = std::clamp(head.first, 0, layers_ - 1);
    head.second = std::clamp(head.second, 0, heads_ - 1);
    if (head == current_) return;
    current_ = head;
    update();
    emit currentHeadChanged(head.first, head.second);
}

QFont HeadGrid::labelFont() const {
    QFont f = font();
    f.setBold(true);
    if (presentation_) f.setPointSizeF(f.pointSizeF() * 1.25);
    return f;
}

HeadGrid::Geometry HeadGrid::geometry() const {
    Geometry g;
    const QFontMetrics metrics(labelFont());
    g.labelWidth = metrics.horizontalAdvance(QStringLiteral("L%1").arg(std::max(layers_ - 1, 0))) +
                   metrics.averageCharWidth();
    g.headerHeight = metrics.height() + 4;
    // Three lines: a narrow grid wraps its caption ("… 2048 tokens, max-pooled 32×32") onto a
    // third.
    g.legendHeight = metrics.height() * 3 + 8;
    if (layers_ == 0 || heads_ == 0) return g;
    const int width = this->width() - g.labelWidth;
    const int height = this->height() - g.headerHeight - g.legendHeight;
    const int pitch = std::max(4, std::min(width / heads_, height / layers_));
    // Room between maps for the frames: the open head's reaches 7.5 pixels outside its map (9 on
    // a projector), never as far as a neighbour. A grid too dense for that (an 8B model's 1,024
    // heads at 1024x768: a pitch of 10 pixels would leave 2-pixel dots) gives each map three
    // quarters of its pitch, and the frames then cover the neighbours' edges.
    g.gap = pitch >= 20 ? std::max(presentation_ ? 12 : 10, pitch / 7) : std::max(2, pitch / 4);
    g.cell = std::max(2, pitch - g.gap);
    return g;
}

QRect HeadGrid::mapRect(HeadId head) const {
    const Geometry g = geometry();
    const int pitch = g.cell + g.gap;
    return QRect(g.labelWidth + head.second * pitch + g.gap / 2,
                 g.headerHeight + head.first * pitch + g.gap / 2, g.cell, g.cell);
}

int HeadGrid::headLabelStep() const {
    if (heads_ == 0) return 1;
    const Geometry g = geometry();
    const QFontMetrics metrics(labelFont());
    const int widest = metrics.horizontalAdvance(QStringLiteral("H%1").arg(heads_ - 1)) + 4;
    int step = 1;
    while (step * (g.cell + g.gap) < widest && step < heads_)
        step *= 2;
    return step;
}

QStringList HeadGrid::layerLabels() const {
    QStringList labels;
    const Geometry g = geometry();
    const int step = std::max(
        1, (QFontMetrics(labelFont()).height() + g.cell + g.gap - 1) / std::max(1, g.cell + g.gap));
    for (int layer = 0; layer < layers_; layer += step)
        labels << QStringLiteral("L%1").arg(layer);
    return labels;
}

QStringList HeadGrid::headLabels() const {
    QStringList labels;
    for (int head = 0; head < heads_; head += headLabelStep())
        labels << QStringLiteral("H%1").arg(head);
    return labels;
}

QSize HeadGrid::sizeHint() const {
    const Geometry g = geometry();
    const int pitch = presentation_ ? 56 : 44;
    return QSize(g.labelWidth + std::max(heads_, 1) * pitch,
                 g.headerHeight + g.legendHeight + std::max(layers_, 1) * pitch);
}

QSize HeadGrid::minimumSizeHint() const {
    const Geometry g = geometry();
    return QSize(g.labelWidth + std::max(heads_, 1) * 8,
                 g.headerHeight + g.legendHeight + std::max(layers_, 1) * 8);
}

void HeadGrid::setPairStart(int position) {
    if (position == pairStart_) return;
    pairStart_ = position;
    update();
}

void HeadGrid::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    if (layers_ == 0 || heads_ == 0) {
        painter.setPen(palette().text().color());
        painter.drawText(rect(), Qt::AlignCenter, tr("No model run"));
        return;
    }
    const Geometry g = geometry();
    const int pitch = g.cell + g.gap;
    painter.setFont(labelFont());
    painter.setPen(palette().text().color());
    const QStringList layerNames = layerLabels();
    const int layerStep = layerNames.size() > 1 ? layerNames[1].mid(1).toInt() : 1;
    for (int layer = 0; layer < layers_; layer += layerStep) {
        const QRect r = mapRect({layer, 0});
        painter.drawText(QRect(0, r.top() - g.gap / 2, g.labelWidth - 2, pitch),
                         Qt::AlignRight | Qt::AlignVCenter, QStringLiteral("L%1").arg(layer));
    }
    const int headStep = headLabelStep();
    for (int head = 0; head < heads_; head += headStep) {
        const QRect r = mapRect({0, head});
        painter.drawText(QRect(r.left() - g.gap / 2 - pitch, 0, pitch * 3, g.headerHeight),
                         Qt::AlignHCenter | Qt::AlignBottom, QStringLiteral("H%1").arg(head));
    }

    const int frame = presentation_ ? 4 : 3;
    for (int layer = 0; layer < layers_; ++layer) {
        for (int head = 0; head < heads_; ++head) {
            const QRect r = mapRect({layer, head});
            const QImage& image = images_[static_cast<size_t>(index({layer, head}))];
            // A layer the pass has not reached: an empty frame where its map will be.
            if (image.isNull())
                painter.fillRect(r, palette().window().color().darker(108));
            else
                painter.drawImage(r, image);
        }
    }
    if (!cross_ && pairStart_ > 0 && pairStart_ < tokenCount_) {
        // Where sentence B starts, in the pooled image's cells (a pooled cell holding both
        // sentences gets the line at its start).
        const int cells = (tokenCount_ + pool_.rowsPerCell - 1) / pool_.rowsPerCell;
        const double at = static_cast<double>(pairStart_ / pool_.rowsPerCell) / cells;
        painter.setPen(QPen(QColor(0xf5, 0x7c, 0x00), presentation_ ? 2 : 1));
        for (int layer = 0; layer < layers_; ++layer) {
            for (int head = 0; head < heads_; ++head) {
                const QRect r = mapRect({layer, head});
                if (images_[static_cast<size_t>(index({layer, head}))].isNull()) continue;
                const int x = r.left() + static_cast<int>(std::lround(at * r.width()));
                const int y = r.top() + static_cast<int>(std::lround(at * r.height()));
                painter.drawLine(x, r.top(), x, r.bottom());
                painter.drawLine(r.left(), y, r.right(), y);
            }
        }
    }
    painter.setBrush(Qt::NoBrush);
    for (const HeadId& head : highlighted_) {
        if (head.first >= layers_ || head.second >= heads_) continue;
        painter.setPen(QPen(kHighlightColor, frame));
        painter.drawRect(mapRect(head).adjusted(-2, -2, 1, 1));
    }
    if (open_ && open_->first < layers_ && open_->second < heads_) {
        // Wider than the threshold's frame and outside it, so a highlighted open head shows both.
        painter.setPen(QPen(kOpenColor, frame + 2));
        painter.drawRect(mapRect(*open_).adjusted(-frame - 2, -frame - 2, frame + 1, frame + 1));
    }
    painter.setRenderHint(QPainter::Antialiasing, true);
    for (const HeadId& head : changed_) {
        if (head.first >= layers_ || head.second >= heads_) continue;
        const QRect r = mapRect(head);
        const double side = std::max(8.0, r.width() * 0.35);
        QPainterPath corner;
        corner.moveTo(r.right() + 1 - side, r.top());
        corner.lineTo(r.right() + 1, r.top());
        corner.lineTo(r.right() + 1, r.top() + side);
        corner.closeSubpath();
        painter.setPen(QPen(Qt::white, 1));
        painter.setBrush(kChangedColor);
        painter.drawPath(corner);
    }
    painter.setRenderHint(QPainter::Antialiasing, false);
    if (hasFocus()) {
        QPen pen(palette().text().color(), 2, Qt::DashLine);
        painter.setPen(pen);
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(mapRect(current_).adjusted(-2, -2, 1, 1));
    }

    // The legend: the colour bar and what its range is.
    const int legendTop = g.headerHeight + layers_ * pitch + 4;
    const QFontMetrics metrics(painter.font());
    QFont plain = font();
    if (presentation_) plain.setPointSizeF(plain.pointSizeF() * 1.25);
    painter.setFont(plain);
    const QFontMetrics plainMetrics(plain);
    const int barWidth = std::min(240, std::max(80, width() / 4));
    const int barHeight = plainMetrics.height() * 2 / 3;
    QImage bar(barWidth, 1, QImage::Format_RGB32);
    {
        QCPColorGradient gradient = colorGradient(colorMap_);
        std::vector<double> ramp(static_cast<size_t>(barWidth));
        for (int x = 0; x < barWidth; ++x)
            ramp[static_cast<size_t>(x)] = static_cast<double>(x) / (barWidth - 1);
        gradient.colorize(ramp.data(), QCPRange(0, 1), reinterpret_cast<QRgb*>(bar.scanLine(0)),
                          barWidth);
    }
    const int barLeft = g.labelWidth + g.gap / 2;
    painter.drawImage(QRect(barLeft, legendTop, barWidth, barHeight), bar);
    painter.setPen(palette().text().color());
    QString caption;
    const QString what = valueWeighted_ ? tr("value-weighted share") : tr("weight");
    if (rangeMode_ == RangeMode::Shared) {
        caption = tr("%1 0 to %2, shared by every map")
                      .arg(what)
                      .arg(colorRange({0, 0}).second, 0, 'f', 2);
    } else {
        caption = tr("%1 0 to each map's own largest").arg(what);
    }
    if (pool_.rowsPerCell > 1 || pool_.columnsPerCell > 1) {
        caption +=
            cross_ ? tr(" · %1 × %2 tokens, max-pooled %3×%4")
                         .arg(tokenCount_)
                         .arg(keyCount_)
                         .arg(pool_.rowsPerCell)
                         .arg(pool_.columnsPerCell)
                   : tr(" · %1 tokens, max-pooled %2×%2").arg(tokenCount_).arg(pool_.rowsPerCell);
    }
    const int captionLeft = barLeft + barWidth + 8;
    painter.drawText(QRect(captionLeft, legendTop - 2, std::max(40, width() - captionLeft - 2),
                           plainMetrics.height() * 3 + 4),
                     Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, caption);
}

std::optional<HeadId> HeadGrid::headAt(const QPoint& pixel) const {
    if (layers_ == 0 || heads_ == 0) return std::nullopt;
    const Geometry g = geometry();
    const int pitch = g.cell + g.gap;
    const int x = pixel.x() - g.labelWidth, y = pixel.y() - g.headerHeight;
    if (x < 0 || y < 0) return std::nullopt;
    const HeadId head{y / pitch, x / pitch};
    if (head.first >= layers_ || head.second >= heads_) return std::nullopt;
    // The gaps belong to their map, so the pointer never flickers between heads.
    return head;
}

QString HeadGrid::tokenLabel(int position) const {
    if (position < tokens_.size() && !tokens_[position].isEmpty())
        return QStringLiteral("%1 “%2”").arg(position).arg(tokens_[position]);
    return QString::number(position);
}

QString HeadGrid::keyLabel(int position) const {
    if (!cross_) return tokenLabel(position);
    if (position < keyTokens_.size() && !keyTokens_[position].isEmpty())
        return QStringLiteral("%1 “%2”").arg(position).arg(keyTokens_[position]);
    return QString::number(position);
}

QString HeadGrid::cellText(HeadId head, int shownRow, int shownColumn) const {
    if (pooled_[static_cast<size_t>(index(head))].empty()) return tr("not run yet");
    const double value = pooled_[static_cast<size_t>(index(head))]
                                [static_cast<size_t>(shownRow) * pool_.shownColumns + shownColumn];
    const QString what = valueWeighted_ ? tr("value-weighted share") : tr("weight");
    if (pool_.rowsPerCell == 1 && pool_.columnsPerCell == 1) {
        return tr("%1 → %2: %3 %4")
            .arg(tokenLabel(shownRow), keyLabel(shownColumn), what)
            .arg(value, 0, 'f', 3);
    }
    const int firstRow = shownRow * pool_.rowsPerCell;
    const int lastRow = std::min(tokenCount_, firstRow + pool_.rowsPerCell) - 1;
    const int firstColumn = shownColumn * pool_.columnsPerCell;
    const int lastColumn = std::min(keyCount_, firstColumn + pool_.columnsPerCell) - 1;
    return tr("queries %1–%2 → keys %3–%4: largest %5 %6")
        .arg(firstRow)
        .arg(lastRow)
        .arg(firstColumn)
        .arg(lastColumn)
        .arg(what)
        .arg(value, 0, 'f', 3);
}

QString HeadGrid::hoverText(const QPoint& pixel) const {
    const std::optional<HeadId> head = headAt(pixel);
    if (!head) return {};
    const size_t i = static_cast<size_t>(index(*head));
    QString text = i < summaries_.size()
                       ? headSummaryText(summaries_[i])
                       : QStringLiteral("L%1 H%2").arg(head->first).arg(head->second);
    if (changed_.count(*head)) text += tr(" · changed by the what-if");
    const QRect r = mapRect(*head);
    if (r.contains(pixel) && pool_.shownRows > 0) {
        const int row = std::min(pool_.shownRows - 1,
                                 (pixel.y() - r.top()) * pool_.shownRows / std::max(1, r.height()));
        const int column =
            std::min(pool_.shownColumns - 1,
                     (pixel.x() - r.left()) * pool_.shownColumns / std::max(1, r.width()));
        text += QStringLiteral("\n") + cellText(*head, row, column);
    }
    return text;
}

QColor HeadGrid::paintedColor(HeadId head, int row, int column) const {
    const QImage& image = images_[static_cast<size_t>(index(head))];
    if (image.isNull()) return {};
    return image.pixelColor(column / pool_.columnsPerCell, row / pool_.rowsPerCell);
}

void HeadGrid::setHoverText(const QString& text) {
    if (text == hoverText_) return;
    hoverText_ = text;
    setToolTip(text);
    emit hoverTextChanged(text);
}

void HeadGrid::mouseMoveEvent(QMouseEvent* event) {
    setHoverText(hoverText(event->position().toPoint()));
}

void HeadGrid::leaveEvent(QEvent*) {
    setHoverText({});
}

void HeadGrid::focusInEvent(QFocusEvent* event) {
    QWidget::focusInEvent(event);
    update();  // the keyboard's frame
}

void HeadGrid::focusOutEvent(QFocusEvent* event) {
    QWidget::focusOutEvent(event);
    update();
}

void HeadGrid::mousePressEvent(QMouseEvent* event) {
    if (const auto head = headAt(event->position().toPoint())) setCurrentHead(*head);
}

void HeadGrid::mouseDoubleClickEvent(QMouseEvent* event) {
    if (const auto head = headAt(event->position().toPoint())) {
        setCurrentHead(*head);
        emit headActivated(head->first, head->second);
    }
}

void HeadGrid::keyPressEvent(QKeyEvent* event) {
    HeadId head = current_;
    switch (event->key()) {
        case Qt::Key_Left:
            --head.second;
            break;
        case Qt::Key_Right:
            ++head.second;
            break;
        case Qt::Key_Up:
            --head.first;
            break;
        case Qt::Key_Down:
            ++head.first;
            break;
        case Qt::Key_Home:
            head = {0, 0};
            break;
        case Qt::Key_End:
            head = {layers_ - 1, heads_ - 1};
            break;
        case Qt::Key_Return:
        case Qt::Key_Enter:
            if (layers_ > 0) emit headActivated(current_.first, current_.second);
            return;
        default:
            QWidget::keyPressEvent(event);
            return;
    }
    setCurrentHead(head);
    if (layers_ > 0) {
        const auto text = hoverText(mapRect(current_).topLeft() - QPoint(1, 1));
        setHoverText(text);
    }
}

}  // namespace ae::plot
