#include "ui/classroom/comparison_views.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/scene_edit.h"
#include "document/attention_document.h"
#include "plot/color_maps.h"
#include "plot/heatmap_controller.h"
#include "plot/scaling_chart.h"
#include "ui/classroom/map_labels.h"
#include "ui/classroom/refresh_when_shown.h"

namespace ae::ui {
namespace {

plot::HeatmapController* weightsMap(QWidget* parent, const QString& title) {
    auto* map = new plot::HeatmapController(parent);
    map->setTitle(title);
    map->setGradient(plot::ColorMap::Viridis);
    map->setAxisTitles(QObject::tr("query"), QObject::tr("key"));
    map->setShowValues(true);
    map->widget()->setMinimumSize(260, 240);
    return map;
}

void showWeights(plot::HeatmapController* map, const plot::EngineF::ConstBlock& w,
                 const QStringList& rows, const QStringList& columns) {
    map->setLabels(rows, columns, true);
    map->setMatrix(w);
    map->setDataRange(0.0, 1.0);
    map->replot();
}

QLabel* captionLabel(QWidget* parent) {
    auto* label = new QLabel(parent);
    label->setWordWrap(true);
    label->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    label->setMinimumHeight(60);
    return label;
}

}  // namespace

// --- pin and compare ---------------------------------------------------------------------------

PinCompareView::PinCompareView(document::AttentionDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    refresher_ = new RefreshWhenShown(this, [this] { refresh(); });
    setObjectName(QStringLiteral("pinCompareView"));
    pinButton_ = new QPushButton(tr("Pin current weights"), this);
    pinButton_->setObjectName(QStringLiteral("repinButton"));
    pinButton_->setToolTip(
        tr("Remember these weights (Shift+F5), then change anything. Edits never re-pin: the "
           "pinned maps stay until you press this again."));
    headSpin_ = new QSpinBox(this);
    headSpin_->setObjectName(QStringLiteral("pinHeadSpin"));
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    auto* top = new QHBoxLayout;
    top->addWidget(pinButton_);
    top->addWidget(new QLabel(tr("  Head"), this));
    top->addWidget(headSpin_);
    top->addWidget(status_, 1);

    // The difference's colours in words, under its map: a class reads the key, not the code.
    // Framed swatches, so "unchanged" (near white) shows on a light window too.
    legend_ = new QWidget(this);
    legend_->setObjectName(QStringLiteral("pinLegend"));
    auto* legendRow = new QHBoxLayout(legend_);
    legendRow->setContentsMargins(0, 0, 0, 0);
    const std::pair<double, QString> keys[] = {{0.8, tr("blue: grew since pinned")},
                                               {0.0, tr("white: unchanged")},
                                               {-0.8, tr("red: fell since pinned")}};
    legendRow->addStretch(1);
    for (const auto& [value, text] : keys) {
        auto* swatch = new QFrame(legend_);
        swatch->setFixedSize(18, 12);
        swatch->setStyleSheet(
            QStringLiteral("QFrame { background: %1; border: 1px solid #666; }")
                .arg(plot::gradientColor(plot::ColorMap::RdBu, value, -1, 1).name()));
        legendRow->addWidget(swatch);
        legendRow->addWidget(new QLabel(text, legend_));
        legendRow->addSpacing(10);
    }

    pinnedMap_ = weightsMap(this, tr("pinned"));
    currentMap_ = weightsMap(this, tr("current"));
    differenceMap_ = new plot::HeatmapController(this);
    differenceMap_->setTitle(tr("current − pinned"));
    differenceMap_->setGradient(plot::ColorMap::RdBu);
    differenceMap_->setAxisTitles(tr("query"), tr("key"));
    differenceMap_->setShowValues(true);
    differenceMap_->widget()->setMinimumSize(260, 240);
    auto* maps = new QHBoxLayout;
    for (plot::HeatmapController* m : {pinnedMap_, currentMap_, differenceMap_})
        maps->addWidget(m->widget(), 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(maps, 1);
    layout->addWidget(legend_);

    connect(pinButton_, &QPushButton::clicked, this, &PinCompareView::pin);
    connect(headSpin_, &QSpinBox::valueChanged, this, &PinCompareView::setHead);
    connect(document_, &document::AttentionDocument::resultsChanged, refresher_,
            &RefreshWhenShown::changed);
    refresh();
}

void PinCompareView::pin() {
    const Scene& scene = document_->engine().scene();  // the scene of the shown results
    if (scene.tokens.empty() || !document_->errorText().isEmpty()) return;
    const plot::EngineF& engine = document_->engine();
    pinned_.clear();
    for (int h = 0; h < engine.heads(); ++h)
        pinned_.push_back(engine.weights(h));
    pinnedTokens_ = scene.tokens;
    pinnedKeys_ = scene.keyTokens();
    pinnedDescription_ = tr("pinned: %1 heads, divisor %2%3")
                             .arg(engine.heads())
                             .arg(QString::number(engine.divisor(), 'g', 4))
                             .arg(scene.mask.causal ? tr(", causal") : QString());
    refresh();
}

void PinCompareView::setHead(int head) {
    if (head == head_) return;
    head_ = head;
    refresh();
}

void PinCompareView::refresh() {
    refresher_->refreshed();
    const Scene& scene = document_->engine().scene();  // the scene of the shown results
    if (scene.tokens.empty() || !document_->errorText().isEmpty()) return;
    const plot::EngineF& engine = document_->engine();
    {
        const QSignalBlocker block(headSpin_);
        headSpin_->setRange(0, engine.heads() - 1);
        head_ = std::clamp(head_, 0, engine.heads() - 1);
        headSpin_->setValue(head_);
    }
    problem_.clear();
    if (pinned_.empty()) {
        problem_ =
            tr("Nothing pinned yet: press <b>Pin current weights</b> (Shift+F5), then change "
               "anything — divisor, mask, heads, an embedding.");
    } else if (head_ >= static_cast<int>(pinned_.size())) {
        problem_ = tr("Head %1 did not exist when the weights were pinned (%2 heads then).")
                       .arg(head_)
                       .arg(pinned_.size());
    } else if (pinned_[head_].rows() != scene.queryCount() ||
               pinned_[head_].cols() != scene.keyCount()) {
        problem_ = tr("The tokens changed since pinning (%1 × %2 then, %3 × %4 now): re-pin "
                      "(Shift+F5).")
                       .arg(pinned_[head_].rows())
                       .arg(pinned_[head_].cols())
                       .arg(scene.queryCount())
                       .arg(scene.keyCount());
    }
    pinButton_->setText(pinned_.empty() ? tr("Pin current weights") : tr("Re-pin current weights"));
    for (plot::HeatmapController* m : {pinnedMap_, currentMap_, differenceMap_})
        m->widget()->setVisible(problem_.isEmpty());
    legend_->setVisible(problem_.isEmpty());
    if (!problem_.isEmpty()) {
        status_->setText(problem_);
        return;
    }
    const plot::EngineF::Matrix& pinned = pinned_[head_];
    const plot::EngineF::Matrix& current = engine.weights(head_);
    // The usual convention: what is now minus what was, so positive means "grew".
    const plot::EngineF::Matrix difference = current - pinned;
    const QStringList rows = tokenLabels(scene.tokens), columns = tokenLabels(scene.keyTokens());
    showWeights(pinnedMap_, pinned, tokenLabels(pinnedTokens_), tokenLabels(pinnedKeys_));
    showWeights(currentMap_, current, rows, columns);
    currentMap_->setAllowed(engine.allowed());
    differenceMap_->setLabels(rows, columns, true);
    differenceMap_->setMatrix(difference);
    // A floor on the range, so rounding noise never paints the map in full colour.
    const double largest = difference.size() ? difference.cwiseAbs().maxCoeff() : 0.0;
    const double range = std::max(largest, 0.05);
    differenceMap_->setDataRange(-range, range);
    differenceMap_->replot();
    status_->setText(
        tr("%1. Largest change: %2.").arg(pinnedDescription_, QString::number(largest, 'g', 3)));
}

// --- why three matrices ------------------------------------------------------------------------

ProjectionComparison::ProjectionComparison(document::AttentionDocument* document, QWidget* parent)
    : QDialog(parent), document_(document) {
    refresher_ = new RefreshWhenShown(this, [this] { refresh(); });
    setObjectName(QStringLiteral("projectionComparison"));
    setWindowTitle(tr("Why three matrices?"));
    auto* grid = new QGridLayout;
    const QString titles[kVariants] = {tr("separate W_Q, W_K, W_V"), tr("shared: W_K = W_Q"),
                                       tr("identity: Q = K = V = X")};
    for (int v = 0; v < kVariants; ++v) {
        maps_[v] = weightsMap(this, titles[v]);
        captions_[v] = captionLabel(this);
        grid->addWidget(maps_[v]->widget(), 0, v);
        grid->addWidget(captions_[v], 1, v);
        grid->setColumnStretch(v, 1);
    }
    grid->setRowStretch(0, 1);
    auto* intro = new QLabel(
        tr("The same tokens through three kinds of projection (the scene itself is not "
           "changed). Queries ask, keys answer: with separate matrices a token can look for "
           "something other than what it offers. With one matrix for both, the scores are "
           "symmetric: score(i, j) = score(j, i)."),
        this);
    intro->setWordWrap(true);
    shown_ = new QComboBox(this);
    shown_->setObjectName(QStringLiteral("threeMatricesShown"));
    shown_->addItem(tr("scores, before the softmax (where the symmetry is)"));
    shown_->addItem(tr("weights, after the softmax (each row sums to 1)"));
    maskNote_ = new QLabel(this);
    maskNote_->setObjectName(QStringLiteral("threeMatricesMaskNote"));
    maskNote_->setWordWrap(true);
    auto* showRow = new QHBoxLayout;
    showRow->addWidget(new QLabel(tr("Show"), this));
    showRow->addWidget(shown_);
    showRow->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(showRow);
    layout->addWidget(maskNote_);
    layout->addLayout(grid, 1);
    connect(shown_, &QComboBox::currentIndexChanged, this, &ProjectionComparison::refresh);
    connect(document_, &document::AttentionDocument::resultsChanged, refresher_,
            &RefreshWhenShown::changed);
    resize(1200, 600);
    refresh();
}

bool ProjectionComparison::showsScores() const {
    return shown_->currentIndex() == 0;
}

void ProjectionComparison::setShowsScores(bool scores) {
    shown_->setCurrentIndex(scores ? 0 : 1);
}

void ProjectionComparison::setHead(int head) {
    head_ = head;
    refresh();
}

void ProjectionComparison::refresh() {
    refresher_->refreshed();
    const Scene& base = document_->scene();
    if (base.tokens.empty()) return;
    const InitSpec spec = inferredDrawSpec(base);
    const ProjectionMode modes[kVariants] = {ProjectionMode::Separate, ProjectionMode::SharedQK,
                                             ProjectionMode::Identity};
    const QStringList rows = tokenLabels(base.tokens), columns = tokenLabels(base.keyTokens());
    // A mask would blank one side of every pair (the causal mask, the whole upper triangle) and
    // hide the symmetry this view is about: every variant is computed without it.
    const Mask& mask = base.mask;
    const bool masked =
        mask.causal || mask.window || mask.allowed ||
        std::find(mask.padding.begin(), mask.padding.end(), true) != mask.padding.end();
    maskNote_->setVisible(masked);
    maskNote_->setText(
        tr("Computed without the scene's mask%1: a mask hides one of score(i, j) and "
           "score(j, i), and with it the symmetry. The maps in the main window keep the mask.")
            .arg(mask.causal ? tr(" (causal)") : QString()));
    const bool scores = showsScores();
    for (int v = 0; v < kVariants; ++v) {
        Scene scene = base;
        scene.mask = Mask{};
        QString note;
        if (modes[v] != base.projections.mode) {
            setProjectionMode(scene, modes[v], spec);
            // Separate from shared (or identity) starts with W_K = W_Q: draw W_K so it differs.
            if (modes[v] == ProjectionMode::Separate) {
                scene.projections.key =
                    drawnProjections(spec, scene.dModel(), scene.dProj(), 0).key;
                note = tr(" W_K drawn from the scene's seed.");
            }
        }
        if (scene.dProj() % scene.heads != 0)
            scene.heads = largestDivisorAtMost(scene.dProj(), scene.heads);
        const int h = std::clamp(head_, 0, scene.heads - 1);
        weights_[v].resize(0, 0);
        scores_[v].resize(0, 0);
        try {
            AttentionEngine<float> engine(scene);
            engine.compute();
            weights_[v] = engine.weights(h);
            scores_[v] = engine.scores(h);
        } catch (const SceneError& e) {
            captions_[v]->setText(tr("Cannot compute: %1").arg(QString::fromStdString(e.what())));
            maps_[v]->widget()->hide();
            continue;
        }
        maps_[v]->widget()->show();
        if (scores) {
            // Signed numbers on a diverging map centred on 0, so equal mirror cells look equal.
            const plot::EngineF::Matrix& s = scores_[v];
            const double largest = s.size() ? s.cwiseAbs().maxCoeff() : 0.0;
            const double range = largest > 0.0 ? largest : 1.0;
            maps_[v]->setGradient(plot::ColorMap::RdBu);
            maps_[v]->setLabels(rows, columns, true);
            maps_[v]->setMatrix(s);
            maps_[v]->setDataRange(-range, range);
            maps_[v]->replot();
        } else {
            maps_[v]->setGradient(plot::ColorMap::Viridis);
            showWeights(maps_[v], weights_[v], rows, columns);
        }
        const plot::EngineF::Matrix& s = scores_[v];
        QString fact;
        if (s.rows() == s.cols()) {
            const double asymmetry = (s - s.transpose()).cwiseAbs().maxCoeff();
            fact =
                tr("largest |score_ij − score_ji| = %1.").arg(QString::number(asymmetry, 'g', 3));
        }
        QString meaning;
        switch (v) {
            case 0:
                meaning = tr("Queries and keys differ: i can attend to j while j ignores i.");
                break;
            case 1:
                meaning =
                    tr("One matrix for both: score_ij = score_ji, attention is mutual "
                       "before the softmax.");
                break;
            default:
                meaning =
                    tr("No projection: a token matches itself best (its own dot product "
                       "is |x|²), so the diagonal tends to win.");
                break;
        }
        captions_[v]->setText(QStringLiteral("<b>%1</b><br>%2%3<br>head %4 of %5")
                                  .arg(meaning, fact, note)
                                  .arg(h)
                                  .arg(scene.heads));
    }
}

// --- why √d_k ----------------------------------------------------------------------------------

QVector<QPointF> ScalingPlot::drawnCurve(int curve) const {
    return chart_->drawnCurve(curve);
}

ScalingPlot::ScalingPlot(QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("scalingPlot"));
    setWindowTitle(tr("Why divide by √d_k?"));
    std::vector<int> dks;
    for (int dk = 1; dk <= 1024; dk *= 2)
        dks.push_back(dk);
    points_ = scalingStudy(dks, kTokens, kTrials, 2017);

    chart_ = new plot::ScalingChart(points_, kTokens, this);
    chart_->widget()->setMinimumSize(900, 380);

    auto* note = new QLabel(
        tr("Computed now by the engine: for each d_k, %1 random layers of %2 queries and %2 keys "
           "with unit-variance entries (core/scaling_study). Without scaling (red, dashed) the "
           "variance of q·k grows like d_k, the largest weight goes to 1 and the entropy to 0: "
           "the softmax picks one key and its gradient vanishes. Divided by √d_k (blue) the "
           "variance stays 1 and the weights stay soft at every width. Dotted: d_k itself, and "
           "the entropy of uniform attention, log2 %2.")
            .arg(kTrials)
            .arg(kTokens),
        this);
    note->setWordWrap(true);
    auto* box = new QVBoxLayout(this);
    box->addWidget(chart_->widget(), 1);
    box->addWidget(note);
    resize(1200, 560);
}

// --- why positions -----------------------------------------------------------------------------

namespace {

enum class Permutation { Reverse, RotateLeft, SwapFirstTwo };

std::vector<int> makePermutation(Permutation kind, int n) {
    std::vector<int> perm(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) {
        switch (kind) {
            case Permutation::Reverse:
                perm[p] = n - 1 - p;
                break;
            case Permutation::RotateLeft:
                perm[p] = (p + 1) % n;
                break;
            case Permutation::SwapFirstTwo:
                perm[p] = n > 1 && p < 2 ? 1 - p : p;
                break;
        }
    }
    return perm;
}

void permuteStream(Scene& scene, Stream stream, const std::vector<int>& perm) {
    const std::vector<std::string>& old = streamTokens(scene, stream);
    std::vector<std::string> tokens;
    for (int from : perm)
        tokens.push_back(old[static_cast<size_t>(from)]);
    retokenize(scene, stream, tokens, perm);
}

}  // namespace

PositionsComparison::PositionsComparison(document::AttentionDocument* document, QWidget* parent)
    : QDialog(parent), document_(document) {
    refresher_ = new RefreshWhenShown(this, [this] { refresh(); });
    setObjectName(QStringLiteral("positionsComparison"));
    setWindowTitle(tr("Why positions?"));
    encodings_ = new QCheckBox(tr("&Positional encodings"), this);
    encodings_->setObjectName(QStringLiteral("positionsCheck"));
    encodings_->setChecked(true);
    permutationKind_ = new QComboBox(this);
    permutationKind_->addItems({tr("reverse the sentence"), tr("move the first word to the end"),
                                tr("swap the first two words")});
    verdict_ = new QLabel(this);
    verdict_->setObjectName(QStringLiteral("positionsVerdict"));
    verdict_->setWordWrap(true);
    QFont big = verdict_->font();
    big.setPointSizeF(big.pointSizeF() * 1.2);
    verdict_->setFont(big);
    auto* top = new QHBoxLayout;
    top->addWidget(encodings_);
    top->addWidget(new QLabel(tr("   Reorder:"), this));
    top->addWidget(permutationKind_);
    top->addStretch(1);
    const QString titles[3] = {tr("original order"), tr("reordered sentence"),
                               tr("original, rows and columns moved the same way")};
    auto* maps = new QHBoxLayout;
    for (int m = 0; m < 3; ++m) {
        maps_[m] = weightsMap(this, titles[m]);
        maps->addWidget(maps_[m]->widget(), 1);
    }
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(maps, 1);
    layout->addWidget(verdict_);
    connect(encodings_, &QCheckBox::toggled, this, &PositionsComparison::refresh);
    connect(permutationKind_, &QComboBox::currentIndexChanged, this, &PositionsComparison::refresh);
    connect(document_, &document::AttentionDocument::resultsChanged, refresher_,
            &RefreshWhenShown::changed);
    resize(1200, 560);
    refresh();
}

bool PositionsComparison::encodings() const {
    return encodings_->isChecked();
}

void PositionsComparison::setEncodings(bool on) {
    if (encodings_->isChecked() == on) refresh();  // it may have missed changes while hidden
    encodings_->setChecked(on);
}

void PositionsComparison::setHead(int head) {
    head_ = head;
    refresh();
}

void PositionsComparison::refresh() {
    refresher_->refreshed();
    Scene original = document_->scene();
    if (original.tokens.empty()) return;
    // Masks are about positions too (causal is order itself): off here, so only the encodings
    // can make order matter.
    original.mask = Mask{};
    QString added;
    if (!encodings()) {
        original.positional.kind = PositionalKind::None;
    } else if (original.positional.kind == PositionalKind::None) {
        original.positional.kind = PositionalKind::Sinusoidal;
        original.positional.base = 10000.0;
        added = tr(" This scene has no positions of its own: sinusoidal ones are added here.");
    }
    const auto kind = static_cast<Permutation>(permutationKind_->currentIndex());
    perm_ = makePermutation(kind, original.queryCount());
    const std::vector<int> permK =
        original.hasSource ? makePermutation(kind, original.keyCount()) : perm_;
    Scene permuted = original;
    permuteStream(permuted, Stream::Query, perm_);
    if (original.hasSource) permuteStream(permuted, Stream::Source, permK);

    const int h = std::clamp(head_, 0, original.heads - 1);
    plot::EngineF::Matrix before, after;
    try {
        AttentionEngine<float> a(original), b(permuted);
        a.compute();
        b.compute();
        before = a.weights(h);
        after = b.weights(h);
    } catch (const SceneError& e) {
        verdict_->setText(tr("Cannot compute: %1").arg(QString::fromStdString(e.what())));
        return;
    }
    plot::EngineF::Matrix reordered(after.rows(), after.cols());
    deviation_ = 0;
    for (Eigen::Index p = 0; p < after.rows(); ++p) {
        for (Eigen::Index q = 0; q < after.cols(); ++q) {
            reordered(p, q) = before(perm_[p], permK[q]);
            deviation_ = std::max(deviation_, std::abs(double(after(p, q)) - reordered(p, q)));
        }
    }
    showWeights(maps_[0], before, tokenLabels(original.tokens), tokenLabels(original.keyTokens()));
    showWeights(maps_[1], after, tokenLabels(permuted.tokens), tokenLabels(permuted.keyTokens()));
    showWeights(maps_[2], reordered, tokenLabels(permuted.tokens),
                tokenLabels(permuted.keyTokens()));
    const QString amount = QString::number(deviation_, 'g', 2);
    if (deviation_ < 1e-4) {
        verdict_->setText(
            tr("<b>Same attention, only reordered</b> (largest difference %1, rounding): without "
               "positions the layer sees a bag of words. The middle and right maps match.")
                .arg(amount));
    } else {
        verdict_->setText(
            tr("<b>Different attention</b> (largest difference %1): with positional encodings "
               "the same words in another order are a different input. Compare the middle and "
               "right maps.%2")
                .arg(amount, added));
    }
}

}  // namespace ae::ui
