#include "ui/classroom/neuron_view.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "document/attention_document.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "ui/classroom/map_labels.h"
#include "ui/classroom/refresh_when_shown.h"

namespace ae::ui {
namespace {

double symmetricRange(const plot::EngineF::ConstBlock& m) {
    const double a = m.size() ? static_cast<double>(m.cwiseAbs().maxCoeff()) : 0.0;
    return std::isfinite(a) && a > 0 ? a : 1.0;
}

plot::HeatmapController* makeMap(QWidget* parent, const QString& title, int minHeight) {
    auto* map = new plot::HeatmapController(parent);
    map->setTitle(title);
    map->setGradient(plot::ColorMap::RdBu);
    map->setShowValues(true);
    map->widget()->setMinimumSize(160, minHeight);
    return map;
}

void fill(plot::HeatmapController* map, const plot::EngineF::ConstBlock& m, double range) {
    map->setMatrix(m);
    map->setDataRange(-range, range);
    map->replot();
}

}  // namespace

NeuronView::NeuronView(document::AttentionDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    refresher_ = new RefreshWhenShown(this, [this] { refresh(); });
    setObjectName(QStringLiteral("neuronView"));
    headSpin_ = new QSpinBox(this);
    headSpin_->setObjectName(QStringLiteral("neuronHeadSpin"));
    querySpin_ = new QSpinBox(this);
    querySpin_->setObjectName(QStringLiteral("neuronQuerySpin"));
    caption_ = new QLabel(this);
    caption_->setWordWrap(true);
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Head"), this));
    top->addWidget(headSpin_);
    top->addWidget(new QLabel(tr("  Query"), this));
    top->addWidget(querySpin_);
    top->addWidget(caption_, 1);

    embedding_ = new QTableWidget(1, 0, this);
    embedding_->setObjectName(QStringLiteral("neuronEmbedding"));
    embedding_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    embedding_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    embedding_->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    embedding_->setToolTip(tr("Token i's embedding: type a number and watch every map follow"));

    scores_ = new QTableWidget(0, 4, this);
    scores_->setObjectName(QStringLiteral("neuronScores"));
    scores_->setHorizontalHeaderLabels(
        {tr("key"), QStringLiteral("q·k"), QStringLiteral("÷ d"), tr("weight")});
    scores_->verticalHeader()->hide();
    scores_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    scores_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    scores_->verticalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    scores_->setMinimumWidth(220);

    queryMap_ = makeMap(this, tr("q_i"), 105);
    keysMap_ = makeMap(this, tr("k_j (every key)"), 160);
    productMap_ = makeMap(this, tr("q_i ∘ k_j   (sum of a row = q·k)"), 160);
    weightedMap_ = makeMap(this, tr("w_ij · v_j"), 160);
    contextMap_ = makeMap(this, tr("context_i = Σ_j w_ij · v_j"), 105);
    keysMap_->setAxisTitles(tr("key"), tr("dimension"));
    productMap_->setAxisTitles(tr("key"), tr("dimension"));
    weightedMap_->setAxisTitles(tr("key"), tr("dimension"));
    queryMap_->setAxisTitles(QString(), tr("dimension"));
    contextMap_->setAxisTitles(QString(), tr("dimension"));

    auto* grid = new QGridLayout;
    grid->addWidget(queryMap_->widget(), 0, 1);
    grid->addWidget(keysMap_->widget(), 1, 0);
    grid->addWidget(productMap_->widget(), 1, 1);
    grid->addWidget(scores_, 1, 2);
    grid->addWidget(weightedMap_->widget(), 1, 3);
    // The sum sits above the terms it adds up, so every key-row map gets the full height.
    grid->addWidget(contextMap_->widget(), 0, 3);
    grid->setRowStretch(1, 1);
    for (int c : {0, 1, 3})
        grid->setColumnStretch(c, 2);
    grid->setColumnStretch(2, 1);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(embedding_);
    layout->addLayout(grid, 1);

    connect(headSpin_, &QSpinBox::valueChanged, this, &NeuronView::setHead);
    connect(querySpin_, &QSpinBox::valueChanged, this, &NeuronView::setQuery);
    connect(embedding_, &QTableWidget::cellChanged, this, &NeuronView::embeddingEdited);
    connect(document_, &document::AttentionDocument::resultsChanged, refresher_,
            &RefreshWhenShown::changed);
    refresh();
}

void NeuronView::setHead(int head) {
    if (head == head_) return;
    head_ = head;
    refresh();
}

void NeuronView::setQuery(int query) {
    if (query < 0 || query == query_) return;
    query_ = query;
    refresh();
    emit queryChanged(query_);
}

void NeuronView::rebuildEmbeddingRow() {
    // The editable row shows the latest scene, where edits land; query_ may come from the shown
    // results of a scene with more tokens.
    const Scene& scene = document_->scene();
    if (scene.tokens.empty()) return;
    query_ = std::clamp(query_, 0, scene.queryCount() - 1);
    const QSignalBlocker block(embedding_);
    filling_ = true;
    // Sized to their contents once the row is filled, not after every cell: each change re-measured
    // every column, and an 8B model's 4,096 took the window minutes to open a head.
    QHeaderView* columns = embedding_->horizontalHeader();
    columns->setSectionResizeMode(QHeaderView::Interactive);
    if (embedding_->columnCount() != scene.dModel()) {
        embedding_->setColumnCount(scene.dModel());
        QStringList dimensions;
        for (int c = 0; c < scene.dModel(); ++c)
            dimensions << QString::number(c);
        embedding_->setHorizontalHeaderLabels(dimensions);
    }
    embedding_->setVerticalHeaderLabels({QString::fromStdString(scene.tokens[query_])});
    for (int c = 0; c < scene.dModel(); ++c) {
        const QString text = QString::number(scene.embeddings(query_, c), 'g', 6);
        if (QTableWidgetItem* item = embedding_->item(0, c))
            item->setText(text);
        else
            embedding_->setItem(0, c, new QTableWidgetItem(text));
    }
    columns->setSectionResizeMode(QHeaderView::ResizeToContents);
    embedding_->setFixedHeight(embedding_->horizontalHeader()->sizeHint().height() +
                               embedding_->rowHeight(0) + 2 * embedding_->frameWidth() +
                               embedding_->horizontalScrollBar()->sizeHint().height());
    filling_ = false;
}

void NeuronView::embeddingEdited(int row, int column) {
    if (filling_ || row != 0 || query_ >= document_->scene().queryCount()) return;
    bool ok = false;
    const double value = embedding_->item(0, column)->text().toDouble(&ok);
    QString error;
    if (!ok || !document_->setEmbeddingValue(Stream::Query, query_, column, value, &error)) {
        embedding_->setToolTip(ok ? error : tr("Not a number"));
        rebuildEmbeddingRow();
    }
}

void NeuronView::refresh() {
    refresher_->refreshed();
    // The scene the shown results were computed from: while a background job runs, the document's
    // scene() may already be newer (another token count) than engine()'s matrices.
    const Scene& scene = document_->engine().scene();
    if (scene.tokens.empty() || !document_->errorText().isEmpty()) return;
    const plot::EngineF& engine = document_->engine();
    {
        const QSignalBlocker b1(headSpin_), b2(querySpin_);
        headSpin_->setRange(0, engine.heads() - 1);
        querySpin_->setRange(0, scene.queryCount() - 1);
        head_ = std::clamp(head_, 0, engine.heads() - 1);
        query_ = std::clamp(query_, 0, scene.queryCount() - 1);
        headSpin_->setValue(head_);
        querySpin_->setValue(query_);
    }
    const int h = head_, i = query_;
    const int dh = engine.dHead();
    const int lk = scene.keyCount();
    const QStringList keys = tokenLabels(scene.keyTokens());
    const QString token = QString::fromStdString(scene.tokens[i]);
    caption_->setText(tr("query <b>“%1”</b> · divisor %2 · d_head %3")
                          .arg(token, QString::number(engine.divisor(), 'g', 4))
                          .arg(dh));
    rebuildEmbeddingRow();

    // q_i ∘ k_j and w_ij v_j are formed here in float, as the engine's products are; the scores,
    // weights and context beside them are the engine's own numbers.
    const plot::EngineF::ConstBlock k = engine.headKey(h);
    const plot::EngineF::ConstBlock v = engine.headValue(h);
    const plot::EngineF::Matrix q = engine.headQuery(h).row(i);
    plot::EngineF::Matrix products(lk, dh), weighted(lk, dh);
    const auto& w = engine.weights(h);
    for (int j = 0; j < lk; ++j) {
        for (int c = 0; c < dh; ++c) {
            products(j, c) = q(0, c) * k(j, c);
            weighted(j, c) = w(i, j) * v(j, c);
        }
    }
    const plot::EngineF::Matrix context = engine.context(h).row(i);

    const QStringList dims = indexLabels(dh);
    queryMap_->setLabels({token}, dims, false);
    keysMap_->setLabels(keys, dims, false);
    productMap_->setLabels(keys, dims, false);
    weightedMap_->setLabels(keys, dims, false);
    contextMap_->setLabels({token}, dims, false);
    const double qkRange = std::max(symmetricRange(q), symmetricRange(k));
    fill(queryMap_, q, qkRange);
    fill(keysMap_, k, qkRange);
    fill(productMap_, products, symmetricRange(products));
    const double valueRange = std::max(symmetricRange(weighted), symmetricRange(context));
    fill(weightedMap_, weighted, valueRange);
    fill(contextMap_, context, valueRange);
    productMap_->setAllowed(BoolMatrix());

    // The weight's cell in the weights' colours, so the table reads as a strip too.
    std::vector<double> weights;
    for (int j = 0; j < lk; ++j)
        weights.push_back(w(i, j));
    const std::vector<QColor> weightColours =
        plot::gradientColors(plot::ColorMap::Viridis, weights, 0.0, 1.0);
    scores_->setRowCount(lk);
    for (int j = 0; j < lk; ++j) {
        const bool visible = engine.allowed()(i, j);
        auto* key = new QTableWidgetItem(visible ? keys[j] : tr("%1 (masked)").arg(keys[j]));
        if (!visible) key->setForeground(QColor(130, 130, 130));
        scores_->setItem(j, 0, key);
        const float values[3] = {engine.scores(h)(i, j), engine.scaled(h)(i, j), w(i, j)};
        for (int c = 0; c < 3; ++c) {
            auto* item = new QTableWidgetItem(QString::number(values[c], 'g', 4));
            item->setData(Qt::UserRole, values[c]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (c == 2) {
                const QColor& colour = weightColours[static_cast<std::size_t>(j)];
                item->setBackground(colour);
                const bool light = colour.lightnessF() > 0.55;
                item->setForeground(light ? Qt::black : Qt::white);
            }
            scores_->setItem(j, c + 1, item);
        }
    }
}

}  // namespace ae::ui
