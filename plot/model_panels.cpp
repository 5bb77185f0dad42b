#include "plot/model_panels.h"

#include <QButtonGroup>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QRadioButton>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

#include "plot/heatmap_controller.h"
#include "qcustomplot.h"

namespace ae::plot {
namespace {

// Okabe-Ito blue and orange: the two sets stay apart for colour-blind viewers and in grey.
const QColor kQueryColor(0x00, 0x72, 0xB2);
const QColor kKeyColor(0xE6, 0x9F, 0x00);
const QColor kUpColor(0x00, 0x72, 0xB2);
const QColor kDownColor(0xD5, 0x5E, 0x00);

QStringList tokenLabels(const QStringList& tokens, int count) {
    QStringList labels;
    for (int i = 0; i < count; ++i)
        labels << (i < tokens.size() ? tokens[i] : QString::number(i));
    return labels;
}

AttentionEngine<float>::Matrix toFloat(const Eigen::MatrixXd& m) {
    return m.cast<float>();
}

}  // namespace

// ---- Rollout ----

RolloutPanel::RolloutPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    rolloutMap_ = new HeatmapController(this);
    perLayerMap_ = new HeatmapController(this);
    for (HeatmapController* map : {rolloutMap_, perLayerMap_}) {
        map->setGradient(ColorMap::Viridis);
        map->setShowValues(false);
        map->setColorBarLabel(tr("share"));
        layout->addWidget(map->widget(), 1);
    }
    rolloutMap_->setAxisTitles(tr("position"), tr("input token"));
    perLayerMap_->setAxisTitles(tr("after layer"), tr("input token"));
    connect(rolloutMap_, &HeatmapController::cellClicked, this,
            [this](int row, int) { emit positionClicked(row); });
}

void RolloutPanel::setRun(std::shared_ptr<const ae::model::ModelRun<float>> run,
                          const QStringList& tokens) {
    run_ = std::move(run);
    tokens_ = tokens;
    stale_ = true;
    if (isVisible()) draw();
}

void RolloutPanel::drawIfStale() {
    if (stale_) draw();
}

void RolloutPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    drawIfStale();
}

void RolloutPanel::draw() {
    stale_ = false;
    rollout_ = run_ && !run_->layers.empty() ? ae::model::attentionRollout(*run_)
                                             : std::vector<Eigen::MatrixXd>();
    if (rollout_.empty()) return;
    const Eigen::MatrixXd& last = rollout_.back();
    const int count = static_cast<int>(last.rows());
    const QStringList labels = tokenLabels(tokens_, count);
    rolloutMap_->setTitle(tr("Attention rollout through all %1 layers").arg(rollout_.size()));
    rolloutMap_->setLabels(labels, labels, true);
    const AttentionEngine<float>::Matrix values = toFloat(last);
    rolloutMap_->setMatrix(values);
    rolloutMap_->setDataRange(0.0, std::max(1e-9, last.maxCoeff()));
    position_ = std::clamp(position_, 0, count - 1);
    rolloutMap_->setSelectedRow(position_);
    rolloutMap_->replot();
    showPerLayer();
}

void RolloutPanel::setPosition(int position) {
    position_ = position;
    // A rollout waiting to be drawn takes the position then (the old one may be shorter).
    if (stale_ || rollout_.empty()) return;
    position_ = std::clamp(position_, 0, static_cast<int>(rollout_.back().rows()) - 1);
    rolloutMap_->setSelectedRow(position_);
    rolloutMap_->replot();
    showPerLayer();
}

void RolloutPanel::showPerLayer() {
    const int layers = static_cast<int>(rollout_.size());
    const int count = static_cast<int>(rollout_.back().cols());
    Eigen::MatrixXd rows(layers, count);
    for (int layer = 0; layer < layers; ++layer)
        rows.row(layer) = rollout_[static_cast<size_t>(layer)].row(position_);
    QStringList layerNames;
    for (int layer = 0; layer < layers; ++layer)
        layerNames << QStringLiteral("L%1").arg(layer);
    const QStringList labels = tokenLabels(tokens_, count);
    perLayerMap_->setTitle(
        tr("What feeds %1 “%2” after each layer").arg(position_).arg(labels.value(position_)));
    perLayerMap_->setLabels(layerNames, labels, true);
    const AttentionEngine<float>::Matrix values = toFloat(rows);
    perLayerMap_->setMatrix(values);
    perLayerMap_->setDataRange(0.0, std::max(1e-9, rows.maxCoeff()));
    perLayerMap_->replot();
}

// ---- Predictions ----

QString probabilityText(double probability, int significant) {
    if (probability == 0.0) return QStringLiteral("0");
    if (std::abs(probability) < 1e-3) return QString::number(probability, 'e', significant - 1);
    // At least three decimals, and `significant` digits from the first that is not zero:
    // 0.659, 0.0123, 0.00456.
    const int leadingZeros = static_cast<int>(std::floor(-std::log10(std::abs(probability))));
    return QString::number(probability, 'f', std::max(3, leadingZeros + significant));
}

int significantDigitsToTellApart(double before, double after) {
    int significant = 3;
    while (significant < 6 && before != after &&
           probabilityText(before, significant) == probabilityText(after, significant))
        ++significant;
    return significant;
}

PredictionsPanel::PredictionsPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    heading_ = new QLabel(this);
    heading_->setWordWrap(true);
    QFont bold = heading_->font();
    bold.setBold(true);
    heading_->setFont(bold);
    table_ = new QTableWidget(0, ColumnCount, this);
    table_->setHorizontalHeaderLabels(
        {tr("Next token"), tr("Before"), tr("Probability"), tr("Rank")});
    table_->horizontalHeaderItem(BeforeColumn)
        ->setToolTip(tr("The probability before the what-if"));
    table_->horizontalHeaderItem(RankColumn)
        ->setToolTip(tr("How the token's rank moved with the what-if: ↑ up, ↓ down, new: not in "
                        "the list before"));
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionMode(QAbstractItemView::NoSelection);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    // One line a token: "0.659 → 0.659 =" broke before its "=" beside the grid at 1024 pixels.
    table_->setWordWrap(false);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    layout->addWidget(heading_);
    layout->addWidget(table_, 1);
}

void PredictionsPanel::setFillMask(bool fillMask) {
    fillMask_ = fillMask;
    table_->horizontalHeaderItem(TokenColumn)->setText(fillMask ? tr("Token") : tr("Next token"));
}

QString PredictionsPanel::heading() const {
    return heading_->text();
}

// A what-if that flattens a head can move every probability of the list by less than 0.001 and
// still reorder it: each pair is written with the digits that tell it apart (scientific below
// 0.001), the rank's move is a column of its own, and the tooltips hold p and ln p in full.
void PredictionsPanel::setPredictions(const std::vector<ae::model::Prediction>& predictions,
                                      const std::vector<ae::model::Prediction>& before,
                                      const std::function<QString(long long)>& tokenText,
                                      const QString& positionText) {
    const bool whatIf = !before.empty();
    if (fillMask_) {
        heading_->setText(
            whatIf
                ? tr("Most probable tokens at %1, before and after the what-if").arg(positionText)
                : tr("Most probable tokens at %1").arg(positionText));
    } else {
        heading_->setText(
            whatIf ? tr("Most probable next tokens after %1, before and after the what-if")
                         .arg(positionText)
                   : tr("Most probable next tokens after %1").arg(positionText));
    }
    table_->setColumnHidden(BeforeColumn, !whatIf);
    table_->setColumnHidden(RankColumn, !whatIf);
    table_->horizontalHeaderItem(ProbabilityColumn)
        ->setText(whatIf ? tr("After") : tr("Probability"));
    const auto fullText = [](double p) {
        return tr("p = %1, ln p = %2")
            .arg(p, 0, 'g', 6)
            .arg(p > 0 ? QString::number(std::log(p), 'f', 3) : QStringLiteral("−∞"));
    };
    const auto cell = [](const QString& text, const QString& toolTip) {
        auto* item = new QTableWidgetItem(text);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        item->setToolTip(toolTip);
        return item;
    };
    table_->setRowCount(static_cast<int>(predictions.size()));
    for (size_t i = 0; i < predictions.size(); ++i) {
        const auto& p = predictions[i];
        const int row = static_cast<int>(i);
        const QString text = tokenText ? tokenText(p.token) : QString();
        table_->setItem(row, TokenColumn,
                        new QTableWidgetItem(
                            text.isEmpty() ? QString::number(p.token)
                                           : QStringLiteral("“%1”  (%2)").arg(text).arg(p.token)));
        const auto old = std::find_if(before.begin(), before.end(),
                                      [&](const auto& b) { return b.token == p.token; });
        if (!whatIf || old == before.end()) {
            table_->setItem(row, ProbabilityColumn,
                            cell(probabilityText(p.probability), fullText(p.probability)));
            if (!whatIf) {
                table_->setItem(row, BeforeColumn, nullptr);
                table_->setItem(row, RankColumn, nullptr);
                continue;
            }
            table_->setItem(row, BeforeColumn,
                            cell(QStringLiteral("–"),
                                 tr("Not in the top %1 before the what-if").arg(before.size())));
            auto* rank = cell(tr("new"), tr("Not in the top %1 before the what-if; rank %2 after")
                                             .arg(before.size())
                                             .arg(row + 1));
            rank->setForeground(kUpColor);
            QFont font = rank->font();
            font.setBold(true);
            rank->setFont(font);
            table_->setItem(row, RankColumn, rank);
            continue;
        }
        const int digits = significantDigitsToTellApart(old->probability, p.probability);
        const QString beforeText = probabilityText(old->probability, digits);
        const QString afterText = probabilityText(p.probability, digits);
        auto* after = cell(afterText, fullText(p.probability));
        if (afterText != beforeText) {
            after->setForeground(p.probability > old->probability ? kUpColor : kDownColor);
            QFont font = after->font();
            font.setBold(true);
            after->setFont(font);
        }
        table_->setItem(row, ProbabilityColumn, after);
        table_->setItem(row, BeforeColumn, cell(beforeText, fullText(old->probability)));
        const int oldRank = static_cast<int>(old - before.begin());
        const int moved = oldRank - row;  // places up
        auto* rank = cell(moved > 0   ? QStringLiteral("↑%1").arg(moved)
                          : moved < 0 ? QStringLiteral("↓%1").arg(-moved)
                                      : QStringLiteral("="),
                          tr("Rank %1 before the what-if, %2 after").arg(oldRank + 1).arg(row + 1));
        if (moved != 0) rank->setForeground(moved > 0 ? kUpColor : kDownColor);
        table_->setItem(row, RankColumn, rank);
    }
}

// ---- Query-key map ----

QueryKeyPanel::QueryKeyPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* switches = new QHBoxLayout;
    modes_ = new QButtonGroup(this);
    const std::pair<ae::model::QkProjectionMode, QString> modes[] = {
        {ae::model::QkProjectionMode::Separate, tr("Separate")},
        {ae::model::QkProjectionMode::Joint, tr("Joint")},
        {ae::model::QkProjectionMode::Norms, tr("Norms")}};
    for (const auto& [mode, name] : modes) {
        auto* button = new QRadioButton(name, this);
        button->setChecked(mode == mode_);
        modes_->addButton(button, static_cast<int>(mode));
        switches->addWidget(button);
    }
    modes_->button(0)->setToolTip(
        tr("Queries and keys each on their own two principal "
           "components: two different spaces"));
    modes_->button(1)->setToolTip(
        tr("Both on the components of the union: a query near a key "
           "attends to it"));
    modes_->button(2)->setToolTip(tr("Each vector's length against its position"));
    switches->addStretch(1);
    layout->addLayout(switches);
    plot_ = new QCustomPlot(this);
    plot_->installEventFilter(this);
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const QString text = pointTextAt(event->position());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(event->globalPosition().toPoint(), text, plot_);
    });
    // Curves, not graphs: a graph sorts its points by x, a curve keeps them in token order.
    for (int i = 0; i < 2; ++i) {
        const QColor colour = i == 0 ? kQueryColor : kKeyColor;
        curves_[i] = new QCPCurve(plot_->xAxis, plot_->yAxis);
        curves_[i]->setName(i == 0 ? tr("queries") : tr("keys"));
        curves_[i]->setLineStyle(QCPCurve::lsNone);
        curves_[i]->setScatterStyle(QCPScatterStyle(
            i == 0 ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssSquare, colour, colour, 8));
    }
    plot_->legend->setVisible(true);
    plot_->plotLayout()->insertRow(0);
    plot_->plotLayout()->addElement(0, 0, new QCPTextElement(plot_, QString(), QFont()));
    layout->addWidget(plot_, 1);
    connect(modes_, &QButtonGroup::idClicked, this,
            [this](int id) { setMode(static_cast<ae::model::QkProjectionMode>(id)); });
}

void QueryKeyPanel::setHead(std::shared_ptr<const ae::model::ModelRun<float>> run, int layer,
                            int head, const QStringList& tokens) {
    run_ = std::move(run);
    layer_ = layer;
    head_ = head;
    tokens_ = tokens;
    redraw();
}

void QueryKeyPanel::setMode(ae::model::QkProjectionMode mode) {
    mode_ = mode;
    if (auto* button = modes_->button(static_cast<int>(mode))) button->setChecked(true);
    redraw();
}

void QueryKeyPanel::setPresentation(bool on) {
    presentation_ = on;
    redraw();
}

// The projection is an eigen-decomposition per change of text or head: while the panel's tab is
// behind another it waits (a text edit at 128 tokens spent ~5 ms here for nothing).
void QueryKeyPanel::redraw() {
    if (!isVisible()) {
        stale_ = true;
        return;
    }
    draw();
}

void QueryKeyPanel::drawIfStale() {
    if (stale_) draw();
}

void QueryKeyPanel::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    drawIfStale();
}

void QueryKeyPanel::draw() {
    stale_ = false;
    plot_->clearItems();
    auto* title = static_cast<QCPTextElement*>(plot_->plotLayout()->element(0, 0));
    if (!run_ || layer_ >= static_cast<int>(run_->layers.size()) || head_ >= run_->config.heads) {
        curves_[0]->data()->clear();
        curves_[1]->data()->clear();
        title->setText(QString());
        labelled_.reset();
        plot_->replot();
        return;
    }
    using ae::model::QkProjectionMode;
    const ae::model::QkProjection projection =
        ae::model::projectQueriesAndKeys(*run_, layer_, head_, mode_);
    const int count = static_cast<int>(projection.queries.rows());
    const QStringList labels = tokenLabels(tokens_, count);
    QFont labelFont = plot_->font();
    labelFont.setPointSizeF(labelFont.pointSizeF() * (presentation_ ? 1.1 : 0.9));
    const double pointSize = presentation_ ? 11 : 8;
    for (int set = 0; set < 2; ++set) {
        const Eigen::MatrixX2d& points = set == 0 ? projection.queries : projection.keys;
        QVector<double> t(count), x(count), y(count);
        for (int i = 0; i < count; ++i) {
            t[i] = i;
            x[i] = points(i, 0);
            y[i] = points(i, 1);
        }
        QCPCurve* curve = curves_[set];
        curve->setData(t, x, y, true);
        QCPScatterStyle style = curve->scatterStyle();
        style.setSize(pointSize);
        curve->setScatterStyle(style);
    }
    const int queryShare = static_cast<int>(std::lround(projection.explainedQuery * 100));
    const int keyShare = static_cast<int>(std::lround(projection.explainedKey * 100));
    switch (mode_) {
        case QkProjectionMode::Separate:
            // Two short lines: one long line was cut at the panel's width beside the grid.
            plot_->xAxis->setLabel(
                tr("component 1 of each set\nvariance kept: queries %1%, keys %2%")
                    .arg(queryShare)
                    .arg(keyShare));
            plot_->yAxis->setLabel(tr("component 2 of each set"));
            break;
        case QkProjectionMode::Joint:
            plot_->xAxis->setLabel(tr("joint component 1\nvariance kept: queries %1%, keys %2%")
                                       .arg(queryShare)
                                       .arg(keyShare));
            plot_->yAxis->setLabel(tr("joint component 2"));
            break;
        case QkProjectionMode::Norms:
            plot_->xAxis->setLabel(tr("position"));
            plot_->yAxis->setLabel(tr("length of the vector"));
            break;
    }
    title->setText(tr("L%1 H%2: queries and keys").arg(layer_).arg(head_));
    QFont titleFont = plot_->font();
    titleFont.setBold(true);
    title->setFont(titleFont);
    plot_->rescaleAxes();
    for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
        const QCPRange range = axis->range();
        const double margin = std::max(range.size() * 0.08, 1e-6);
        axis->setRange(range.lower - margin, range.upper + margin * (axis == plot_->xAxis ? 2 : 1));
    }
    labelled_ = Labelled{projection, labels, labelFont};
    placeLabels();
    plot_->replot();
}

bool QueryKeyPanel::eventFilter(QObject* watched, QEvent* event) {
    // Queued: the plot takes its new size in its own resize handler, after this filter.
    if (watched == plot_ && event->type() == QEvent::Resize && labelled_)
        QMetaObject::invokeMethod(this, &QueryKeyPanel::relabel, Qt::QueuedConnection);
    return QWidget::eventFilter(watched, event);
}

void QueryKeyPanel::relabel() {
    if (stale_ || !labelled_) return;  // a stale panel is drawn, labels and all, when shown
    plot_->clearItems();
    placeLabels();
    plot_->replot();
}

// Token labels that never cover one another: each point in turn (queries and keys alternating,
// so both sets are named) gets its label where that box is still free, in pixels of the plot as
// laid out. At 128 tokens every fourth name used to be drawn, a cloud of overlapping text in the
// crowded middle; now the outliers and one name per crowd can be read.
void QueryKeyPanel::placeLabels() {
    const auto& [projection, labels, font] = *labelled_;
    // Laid out with this head's ranges and titles first: the boxes are measured in its pixels.
    plot_->replot();
    const QRectF area = plot_->axisRect()->rect();
    const int count = static_cast<int>(projection.queries.rows());
    const std::vector<QPointF> at = pointPixels();  // queries, then keys
    // The legend goes to the corner where it covers the fewest points (a point under it would
    // be lost), and no label is put under it.
    // Its frame (drawn on its outer rect) as laid out now gives its size and its gap to the
    // corner it sits in.
    const QRectF frame = plot_->legend->outerRect();
    const Qt::Alignment now = plot_->axisRect()->insetLayout()->insetAlignment(0);
    const double gapX =
        now & Qt::AlignRight ? area.right() - frame.right() : frame.left() - area.left();
    const double gapY =
        now & Qt::AlignBottom ? area.bottom() - frame.bottom() : frame.top() - area.top();
    const QSizeF legendSize = frame.size();
    const Qt::Alignment corners[] = {Qt::AlignTop | Qt::AlignRight, Qt::AlignTop | Qt::AlignLeft,
                                     Qt::AlignBottom | Qt::AlignRight,
                                     Qt::AlignBottom | Qt::AlignLeft};
    const auto legendAt = [&](Qt::Alignment corner) {
        const double x =
            corner & Qt::AlignLeft ? area.left() + gapX : area.right() - gapX - legendSize.width();
        const double y =
            corner & Qt::AlignTop ? area.top() + gapY : area.bottom() - gapY - legendSize.height();
        return QRectF(QPointF(x, y), legendSize);
    };
    Qt::Alignment best = corners[0];
    auto fewest = std::numeric_limits<std::ptrdiff_t>::max();
    for (Qt::Alignment corner : corners) {
        // A marker is covered in part when its centre is within half its size of the box.
        const double half = curves_[0]->scatterStyle().size() / 2 + 2;
        const QRectF box = legendAt(corner).adjusted(-half, -half, half, half);
        const auto covered =
            std::count_if(at.begin(), at.end(), [&box](QPointF p) { return box.contains(p); });
        if (covered < fewest) {
            fewest = covered;
            best = corner;
        }
    }
    plot_->axisRect()->insetLayout()->setInsetAlignment(0, best);
    const QFontMetricsF metrics(font);
    std::vector<QRectF> taken{legendAt(best)};
    // No label hides a point either: every marker's square is taken, but for the label's own.
    std::vector<QRectF> markers;
    for (std::size_t n = 0; n < at.size(); ++n) {
        const double side =
            curves_[n < static_cast<std::size_t>(count) ? 0 : 1]->scatterStyle().size();
        markers.emplace_back(at[n].x() - side / 2, at[n].y() - side / 2, side, side);
    }
    for (int i = 0; i < count; ++i) {
        for (int set = 0; set < 2; ++set) {
            const Eigen::MatrixX2d& points = set == 0 ? projection.queries : projection.keys;
            const std::size_t own = static_cast<std::size_t>(set * count + i);
            // As drawn: left-aligned 4 px right of the point, its bottom 2 px above it.
            const QRectF box(at[own].x() + 4, at[own].y() - 2 - metrics.height(),
                             metrics.horizontalAdvance(labels[i]), metrics.height());
            const auto overlaps = [&box](const QRectF& other) { return other.intersects(box); };
            bool hidesAPoint = false;
            for (std::size_t m = 0; m < markers.size() && !hidesAPoint; ++m)
                hidesAPoint = m != own && overlaps(markers[m]);
            if (!area.contains(box) || hidesAPoint ||
                std::any_of(taken.begin(), taken.end(), overlaps))
                continue;
            taken.push_back(box);
            auto* text = new QCPItemText(plot_);
            text->position->setCoords(points(i, 0), points(i, 1));
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
            text->setPadding(QMargins(4, 0, 0, 2));
            text->setText(labels[i]);
            text->setFont(font);
            text->setColor(set == 0 ? kQueryColor.darker(130) : kKeyColor.darker(160));
        }
    }
}

QString QueryKeyPanel::pointTextAt(QPointF pixel) const {
    if (!labelled_) return {};
    const QStringList& labels = labelled_->labels;
    const int count = static_cast<int>(labels.size());
    const std::vector<QPointF> at = pointPixels();  // queries, then keys
    QString nearest;
    double best = std::numeric_limits<double>::max();
    for (std::size_t n = 0; n < at.size(); ++n) {
        const int set = n < static_cast<std::size_t>(count) ? 0 : 1;
        const int i = static_cast<int>(n) - set * count;
        const double reach = curves_[set]->scatterStyle().size() / 2 + 3;
        const double distance = std::hypot(at[n].x() - pixel.x(), at[n].y() - pixel.y());
        if (distance > reach || distance >= best) continue;
        best = distance;
        nearest = (set == 0 ? tr("query %1 “%2”") : tr("key %1 “%2”")).arg(i).arg(labels[i]);
    }
    return nearest;
}

std::vector<QPointF> QueryKeyPanel::pointPixels() const {
    const ae::model::QkProjection& projection = labelled_->projection;
    std::vector<QPointF> pixels;
    for (const Eigen::MatrixX2d* points : {&projection.queries, &projection.keys}) {
        for (Eigen::Index i = 0; i < points->rows(); ++i)
            pixels.emplace_back(plot_->xAxis->coordToPixel((*points)(i, 0)),
                                plot_->yAxis->coordToPixel((*points)(i, 1)));
    }
    return pixels;
}

std::vector<QPointF> QueryKeyPanel::plottedQueries() {
    drawIfStale();
    std::vector<QPointF> points;
    for (auto it = curves_[0]->data()->constBegin(); it != curves_[0]->data()->constEnd(); ++it)
        points.emplace_back(it->key, it->value);
    return points;
}

std::vector<QPointF> QueryKeyPanel::plottedKeys() {
    drawIfStale();
    std::vector<QPointF> points;
    for (auto it = curves_[1]->data()->constBegin(); it != curves_[1]->data()->constEnd(); ++it)
        points.emplace_back(it->key, it->value);
    return points;
}

QString QueryKeyPanel::xAxisTitle() {
    drawIfStale();
    return plot_->xAxis->label();
}

QString QueryKeyPanel::yAxisTitle() {
    drawIfStale();
    return plot_->yAxis->label();
}

}  // namespace ae::plot
