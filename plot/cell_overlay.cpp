#include "plot/cell_overlay.h"

#include <algorithm>
#include <cmath>

#include "plot/heatmap_controller.h"

namespace ae::plot {
namespace {

// One pixel per cell, a light veil over hidden ones: it lightens dark cells and greys light ones,
// whatever the value, so it need not be rebuilt when only the numbers change. Every map of a grid
// shows the same mask, so the last veil built is kept and shared (QImage is implicitly shared):
// one image per mask rather than one per map. GUI thread only, as all painting.
QImage veilImage(const BoolMatrix& allowed) {
    static BoolMatrix lastAllowed;
    static QImage lastVeil;
    if (lastVeil.isNull() || !sameCells(allowed, lastAllowed)) {
        const int rows = static_cast<int>(allowed.rows()),
                  columns = static_cast<int>(allowed.cols());
        QImage veil(columns, rows, QImage::Format_ARGB32_Premultiplied);
        const QRgb hidden = qPremultiply(qRgba(255, 255, 255, 120));
        for (int i = 0; i < rows; ++i) {
            auto* line = reinterpret_cast<QRgb*>(veil.scanLine(i));
            for (int j = 0; j < columns; ++j)
                line[j] = allowed(i, j) ? 0 : hidden;
        }
        lastAllowed = allowed;
        lastVeil = veil;
    }
    return lastVeil;
}

}  // namespace

int automaticDecimals(double largest) {
    if (!(largest < 1e5)) return -1;
    if (largest >= 100.0) return 0;
    if (largest >= 10.0) return 1;
    return 2;
}

// A reader compares numbers down a column: "0" beside "0.50" reads as a different kind of value,
// so a map never mixes formats. Two decimals fit a cell and still read on a projector.
CellOverlay::NumberFormat CellOverlay::numberFormat() const {
    if (decimals_ >= 0) return {'f', decimals_};
    QCPColorMapData* data = map_->data();  // its cell() is not const
    double largest = 0.0;
    for (int b = 0; b < data->valueSize(); ++b) {
        for (int a = 0; a < data->keySize(); ++a)
            largest = std::max(largest, std::abs(data->cell(a, b)));
    }
    const int decimals = automaticDecimals(largest);
    return decimals < 0 ? NumberFormat{'e', 1} : NumberFormat{'f', decimals};
}

QString CellOverlay::formatValue(double v, NumberFormat format) {
    QString text = QString::number(v, format.letter, format.decimals);
    // -0.001 rounds to "-0.00": a sign on a zero is noise.
    if (text.startsWith(QLatin1Char('-')) && text.toDouble() == 0.0) text.remove(0, 1);
    return text;
}

void CellOverlay::drawHatch(QCPPainter* painter, const QRectF& r, bool light,
                            const QRectF& keepClear, bool window) {
    const QColor ink = light ? QColor(40, 40, 40, 200) : QColor(255, 255, 255, 210);
    if (r.width() < 6.0 || r.height() < 6.0) {
        // Too small to hatch: a veil still tells masked cells apart.
        painter->fillRect(r, light ? QColor(0, 0, 0, 60) : QColor(255, 255, 255, 90));
        return;
    }
    painter->save();
    QPainterPath hatched;
    hatched.addRect(r);
    if (!keepClear.isEmpty()) {
        QPainterPath hole;
        hole.addRect(keepClear);
        hatched = hatched.subtracted(hole);
    }
    painter->setClipPath(hatched, Qt::IntersectClip);
    painter->setPen(QPen(ink, 1.2));
    const double spacing = std::clamp(std::min(r.width(), r.height()) / 4.0, 5.0, 9.0);
    for (double t = -r.height(); t < r.width(); t += spacing) {
        if (window) {
            painter->drawLine(QPointF(r.left() + t, r.top()),
                              QPointF(r.left() + t + r.height(), r.bottom()));
        } else {
            painter->drawLine(QPointF(r.left() + t, r.bottom()),
                              QPointF(r.left() + t + r.height(), r.top()));
        }
    }
    painter->setPen(QPen(ink, 1.0, Qt::DashLine));
    painter->setBrush(Qt::NoBrush);
    painter->drawRect(r.adjusted(0.5, 0.5, -0.5, -0.5));
    painter->restore();
}

void CellOverlay::drawVeil(QCPPainter* painter) {
    if (veil_.isNull()) veil_ = veilImage(allowed_);
    painter->save();
    painter->setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter->drawImage(cellRect(0, 0).united(cellRect(rows_ - 1, columns_ - 1)), veil_);
    painter->restore();
}

void CellOverlay::draw(QCPPainter* painter) {
    QCPColorMapData* data = map_->data();
    const int columns = columns_;
    const int rows = rows_;
    if (rows == 0 || columns == 0 || data->keySize() == 0) return;
    const QRectF first = cellRect(0, 0);
    const bool masks = hidesCells_ && allowed_.rows() == rows && allowed_.cols() == columns;

    // Numbers are laid out first: the hatching of masked cells must leave their boxes clear.
    QFont numberFont = painter->font();
    const QFontMetricsF baseMetrics(numberFont);
    const NumberFormat format = numberFormat();
    bool numbers = false;
    // Measuring every number shapes its text: not worth it for cells shorter than a line.
    if (showValues_ && !pooled() && first.width() >= 12.0 &&
        first.height() >= baseMetrics.height() * kSmallestNumberScale) {
        // All numbers or none: a map with numbers in only some cells reads as a pattern.
        double widest = 0.0;
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < columns; ++j) {
                widest = std::max(
                    widest, baseMetrics.horizontalAdvance(formatValue(data->cell(j, i), format)));
            }
        }
        numbers = first.width() >= widest + 4.0 && first.height() >= baseMetrics.height();
        // Large cells get larger numbers (up to 1.5x), so they still read on a projector.
        const double grow = std::min({1.5, (first.width() - 6.0) / std::max(widest, 1.0),
                                      first.height() * 0.5 / baseMetrics.height()});
        // Cells a little too small get slightly smaller numbers (down to 0.85x: 7.6 pt beside
        // the window's 9 pt labels), so a map in a paper's column or on a projector still
        // shows them.
        const double shrink = std::min((first.width() - 3.0) / std::max(widest, 1.0),
                                       first.height() / baseMetrics.height());
        if (numbers && textMayGrow_ && grow > 1.1) {
            numberFont.setPointSizeF(numberFont.pointSizeF() * grow);
        } else if (!numbers && shrink >= kSmallestNumberScale) {
            numbers = true;
            numberFont.setPointSizeF(numberFont.pointSizeF() * shrink);
        }
    }
    numbersDrawn_ = numbers;
    const QFontMetricsF metrics(numberFont);
    const auto numberBox = [&](int i, int j) {
        const QRectF cell = cellRect(i, j);
        const QRectF text =
            metrics.boundingRect(cell, Qt::AlignCenter, formatValue(data->cell(j, i), format));
        return text.adjusted(-1.5, 0.0, 1.5, 0.0).intersected(cell);
    };

    if (masks && (pooled() || first.width() < 6.0 || first.height() < 6.0)) {
        drawVeil(painter);
    } else if (masks) {
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < columns; ++j) {
                if (!allowed_(i, j)) {
                    const bool window = outsideWindow_.rows() == rows && outsideWindow_(i, j);
                    drawHatch(painter, cellRect(i, j), isLight(data->cell(j, i)),
                              numbers ? numberBox(i, j) : QRectF(), window);
                }
            }
        }
    }
    if (numbers) {
        painter->save();
        painter->setFont(numberFont);
        for (int i = 0; i < rows; ++i) {
            for (int j = 0; j < columns; ++j) {
                const double v = data->cell(j, i);
                // Masked cells keep their number: it is the value the softmax produced.
                painter->setPen(isLight(v) ? QColor(20, 20, 20) : QColor(250, 250, 250));
                painter->drawText(cellRect(i, j), Qt::AlignCenter, formatValue(v, format));
            }
        }
        painter->restore();
    }
    if (groupWidth_ > 0) {
        painter->setPen(QPen(QColor(20, 20, 20), 2.0));
        const QCPAxis* x = map_->keyAxis();
        const QRectF all = cellRect(0, 0).united(cellRect(rows - 1, columns - 1));
        for (int g = groupWidth_; g < columns; g += groupWidth_) {
            const double px = x->coordToPixel(g - 0.5);
            painter->drawLine(QPointF(px, all.top()), QPointF(px, all.bottom()));
        }
    }
    if (selectedRow_ >= 0 && selectedRow_ < rows) {
        const QRectF r = cellRect(selectedRow_, 0).united(cellRect(selectedRow_, columns - 1));
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(QColor(20, 20, 20), 4.0));
        painter->drawRect(r.adjusted(1, 1, -1, -1));
        painter->setPen(QPen(QColor(255, 200, 0), 2.0));
        painter->drawRect(r.adjusted(1, 1, -1, -1));
    }
    if (cursor_.x() >= 0 && cursor_.x() < columns && cursor_.y() >= 0 && cursor_.y() < rows) {
        // Black inside white: visible on every colour of every map.
        const QRectF r = cellRect(cursor_.y(), cursor_.x());
        painter->setBrush(Qt::NoBrush);
        painter->setPen(QPen(QColor(255, 255, 255), 6.0));
        painter->drawRect(r.adjusted(2, 2, -2, -2));
        painter->setPen(QPen(QColor(0, 0, 0), 3.0));
        painter->drawRect(r.adjusted(2, 2, -2, -2));
    }
}

}  // namespace ae::plot
