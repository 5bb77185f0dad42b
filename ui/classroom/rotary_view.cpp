#include "ui/classroom/rotary_view.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/scene_error.h"
#include "document/attention_document.h"
#include "plot/rotary_charts.h"
#include "ui/classroom/refresh_when_shown.h"

namespace ae::ui {
namespace {

// The θ slider: log10 θ from 2 to 7 in steps of 0.05.
const double kThetaLogLow = 2.0;
const double kThetaLogStep = 0.05;
const int kThetaSteps = 100;

}  // namespace

RotaryView::RotaryView(document::AttentionDocument* document, QWidget* parent)
    : QDialog(parent), document_(document) {
    refresher_ = new RefreshWhenShown(this, [this] { refresh(); });
    setObjectName(QStringLiteral("rotaryView"));
    setWindowTitle(tr("Why rotary positions?"));
    buildControls();
    buildPlots();

    problemLabel_ = new QLabel(this);
    problemLabel_->setObjectName(QStringLiteral("rotaryProblem"));
    problemLabel_->setWordWrap(true);
    problemLabel_->hide();

    auto* pairsRow = new QHBoxLayout;
    for (plot::RotaryPairChart* chart : pairCharts_)
        pairsRow->addWidget(chart->widget(), 1);
    pairsRow->addWidget(shares_->widget(), 1);
    auto* curvesRow = new QHBoxLayout;
    curvesRow->addWidget(rotaryCurves_->widget(), 1);
    curvesRow->addWidget(sinusoidalCurves_->widget(), 1);
    curvesRow->addWidget(frequencies_->widget(), 1);

    content_ = new QWidget(this);
    auto* content = new QVBoxLayout(content_);
    content->setContentsMargins(0, 0, 0, 0);
    content->addWidget(pairsHeader_);
    content->addLayout(pairsRow, 5);
    content->addWidget(legend_);
    content->addLayout(curvesRow, 6);
    content->addWidget(frequencyControls_);
    content->addWidget(readout_);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(choices_);
    layout->addWidget(sourceNote_);
    layout->addWidget(sliders_);
    layout->addWidget(problemLabel_);
    layout->addWidget(content_, 1);

    connect(document_, &document::AttentionDocument::resultsChanged, refresher_,
            &RefreshWhenShown::changed);
    resize(1600, 1000);  // DialogScreenFit brings it inside a smaller screen
    refresh();
}

RotaryView::~RotaryView() = default;

void RotaryView::buildControls() {
    choices_ = new QWidget(this);
    headSpin_ = new QSpinBox(choices_);
    headSpin_->setObjectName(QStringLiteral("rotaryHeadSpin"));
    queryChoice_ = new QComboBox(choices_);
    queryChoice_->setObjectName(QStringLiteral("rotaryQueryChoice"));
    keyChoice_ = new QComboBox(choices_);
    keyChoice_->setObjectName(QStringLiteral("rotaryKeyChoice"));
    auto* reset = new QPushButton(tr("Scene's θ and scaling"), choices_);
    reset->setObjectName(QStringLiteral("rotaryResetButton"));
    reset->setToolTip(
        tr("Back to the rotary parameters of the scene (θ = 10000, no scaling, "
           "when it has none)."));
    auto* row = new QHBoxLayout(choices_);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Head"), choices_));
    row->addWidget(headSpin_);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("Query token"), choices_));
    row->addWidget(queryChoice_, 1);
    row->addSpacing(12);
    row->addWidget(new QLabel(tr("Key token"), choices_));
    row->addWidget(keyChoice_, 1);
    row->addSpacing(12);
    row->addWidget(reset);

    sourceNote_ = new QLabel(this);
    sourceNote_->setObjectName(QStringLiteral("rotarySourceNote"));
    sourceNote_->setWordWrap(true);

    sliders_ = new QWidget(this);
    distance_ = new QSlider(Qt::Horizontal, sliders_);
    distance_->setObjectName(QStringLiteral("rotaryDistanceSlider"));
    distance_->setRange(-kDistanceRange, kDistanceRange);
    distance_->setToolTip(tr("How far the query is after the key: m − n"));
    distanceValue_ = new QLabel(sliders_);
    start_ = new QSlider(Qt::Horizontal, sliders_);
    start_->setObjectName(QStringLiteral("rotaryStartSlider"));
    start_->setRange(0, kLatestStart);
    start_->setPageStep(50);
    start_->setToolTip(tr("Moves both tokens together: the earlier of the two sits here"));
    startValue_ = new QLabel(sliders_);
    for (QLabel* value : {distanceValue_, startValue_}) {
        value->setMinimumWidth(
            value->fontMetrics().horizontalAdvance(QStringLiteral("m = 0000, n = 0000")) + 8);
    }
    auto* grid = new QGridLayout(sliders_);
    grid->setContentsMargins(0, 0, 0, 0);
    auto* distanceTitle = new QLabel(tr("<b>Distance</b> m − n"), sliders_);
    auto* startTitle = new QLabel(tr("<b>Move both</b> (earlier token at)"), sliders_);
    grid->addWidget(distanceTitle, 0, 0);
    grid->addWidget(distance_, 0, 1);
    grid->addWidget(distanceValue_, 0, 2);
    grid->addWidget(startTitle, 0, 3);
    grid->addWidget(start_, 0, 4);
    grid->addWidget(startValue_, 0, 5);
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(4, 1);

    pairsHeader_ = new QWidget(this);
    firstPair_ = new QSpinBox(pairsHeader_);
    firstPair_->setObjectName(QStringLiteral("rotaryFirstPairSpin"));
    firstPair_->setToolTip(tr("The first of the pairs drawn large"));
    pairsCaption_ = new QLabel(pairsHeader_);
    pairsCaption_->setWordWrap(true);
    auto* header = new QHBoxLayout(pairsHeader_);
    header->setContentsMargins(0, 0, 0, 0);
    header->addWidget(new QLabel(tr("Pairs from"), pairsHeader_));
    header->addWidget(firstPair_);
    header->addWidget(pairsCaption_, 1);

    legend_ = new QLabel(this);
    legend_->setObjectName(QStringLiteral("rotaryLegend"));
    legend_->setWordWrap(true);

    frequencyControls_ = new QWidget(this);
    theta_ = new QSlider(Qt::Horizontal, frequencyControls_);
    theta_->setObjectName(QStringLiteral("rotaryThetaSlider"));
    theta_->setRange(0, kThetaSteps);
    theta_->setToolTip(tr("θ (rope_theta), on a log scale from 100 to 10 000 000"));
    thetaValueLabel_ = new QLabel(frequencyControls_);
    thetaValueLabel_->setMinimumWidth(
        thetaValueLabel_->fontMetrics().horizontalAdvance(QStringLiteral("θ = 10000000")) + 8);
    scaling_ = new QComboBox(frequencyControls_);
    scaling_->setObjectName(QStringLiteral("rotaryScalingChoice"));
    // In RopeScaling's order. longrope's per-pair factors come from a checkpoint (Phi-3): the
    // choice is offered only when the scene has them.
    scaling_->addItems({tr("no scaling"), tr("linear"), tr("llama3"), tr("longrope")});
    factor_ = new QDoubleSpinBox(frequencyControls_);
    factor_->setObjectName(QStringLiteral("rotaryFactorSpin"));
    factor_->setRange(1.0, 128.0);
    factor_->setDecimals(1);
    lowFactor_ = new QDoubleSpinBox(frequencyControls_);
    lowFactor_->setObjectName(QStringLiteral("rotaryLowFactorSpin"));
    lowFactor_->setRange(0.1, 64.0);
    lowFactor_->setDecimals(1);
    highFactor_ = new QDoubleSpinBox(frequencyControls_);
    highFactor_->setObjectName(QStringLiteral("rotaryHighFactorSpin"));
    highFactor_->setRange(0.2, 128.0);
    highFactor_->setDecimals(1);
    original_ = new QSpinBox(frequencyControls_);
    original_->setObjectName(QStringLiteral("rotaryOriginalSpin"));
    original_->setRange(2, 10000000);
    original_->setToolTip(
        tr("original_max_position_embeddings: the context the model was "
           "trained on before the scaling stretched it"));
    auto* row2 = new QHBoxLayout(frequencyControls_);
    row2->setContentsMargins(0, 0, 0, 0);
    row2->addWidget(new QLabel(tr("<b>θ</b>"), frequencyControls_));
    row2->addWidget(theta_, 2);
    row2->addWidget(thetaValueLabel_);
    row2->addSpacing(8);
    row2->addWidget(scaling_);
    row2->addWidget(new QLabel(tr("factor"), frequencyControls_));
    row2->addWidget(factor_);
    row2->addWidget(new QLabel(tr("low"), frequencyControls_));
    row2->addWidget(lowFactor_);
    row2->addWidget(new QLabel(tr("high"), frequencyControls_));
    row2->addWidget(highFactor_);
    row2->addWidget(new QLabel(tr("trained on"), frequencyControls_));
    row2->addWidget(original_);

    readout_ = new QLabel(this);
    readout_->setObjectName(QStringLiteral("rotaryReadout"));
    readout_->setWordWrap(true);
    QFont big = readout_->font();
    big.setPointSizeF(big.pointSizeF() * 1.15);
    readout_->setFont(big);

    connect(headSpin_, &QSpinBox::valueChanged, this, &RotaryView::setHead);
    connect(queryChoice_, &QComboBox::activated, this,
            [this](int row) { setTokens(row, keyRow_); });
    connect(keyChoice_, &QComboBox::activated, this,
            [this](int row) { setTokens(queryRow_, row); });
    connect(reset, &QPushButton::clicked, this, &RotaryView::resetParameters);
    connect(distance_, &QSlider::valueChanged, this, [this] {
        drawCurveMarkers();
        drawPositions();
    });
    connect(start_, &QSlider::valueChanged, this, [this] {
        if (!start_->isSliderDown()) {
            drawCurves();
            return;
        }
        // While the handle is dragged, the engine pass of the sinusoidal curves (large layers:
        // a fraction of a second) runs once the queued moves are in, not once per move.
        if (curvesPending_) return;
        curvesPending_ = true;
        QTimer::singleShot(0, this, [this] {
            curvesPending_ = false;
            drawCurves();
        });
    });
    connect(firstPair_, &QSpinBox::valueChanged, this, [this] { drawPositions(); });
    connect(theta_, &QSlider::valueChanged, this, [this](int step) {
        thetaValue_ = std::round(std::pow(10.0, kThetaLogLow + step * kThetaLogStep));
        onParametersEdited();
    });
    connect(scaling_, &QComboBox::currentIndexChanged, this, [this](int index) {
        // Turning a scaling on with factor 1 would change nothing: start where Llama 3.1 does.
        if (index != 0 && factor_->value() == 1.0) {
            const QSignalBlocker block(factor_);
            factor_->setValue(8.0);
        }
        onParametersEdited();
    });
    for (QDoubleSpinBox* spin : {factor_, lowFactor_, highFactor_})
        connect(spin, &QDoubleSpinBox::valueChanged, this, &RotaryView::onParametersEdited);
    connect(original_, &QSpinBox::valueChanged, this, &RotaryView::onParametersEdited);
}

TokenPositions RotaryView::positions() const {
    return positionsAt(distance_->value(), start_->value());
}

int RotaryView::firstShownPair() const {
    return firstPair_->value();
}

RopeParameters RotaryView::parameters() const {
    // What the controls do not set (a partial rotation, longrope's factors and attention factor)
    // stays the scene's.
    RopeParameters rope = sceneRotary_.value_or(RopeParameters{});
    rope.theta = thetaValue_;
    rope.scaling = static_cast<RopeScaling>(scaling_->currentIndex());
    rope.factor = factor_->value();
    rope.lowFrequencyFactor = lowFactor_->value();
    rope.highFrequencyFactor = highFactor_->value();
    rope.originalMaxPositions = original_->value();
    return rope;
}

void RotaryView::setControlsFrom(const RopeParameters& rope) {
    const QSignalBlocker a(theta_), b(scaling_), c(factor_), d(lowFactor_), e(highFactor_),
        f(original_);
    thetaValue_ = rope.theta;
    theta_->setValue(static_cast<int>(
        std::lround((std::log10(std::max(rope.theta, 1.0)) - kThetaLogLow) / kThetaLogStep)));
    scaling_->setCurrentIndex(static_cast<int>(rope.scaling));
    factor_->setValue(rope.factor);
    lowFactor_->setValue(rope.lowFrequencyFactor);
    highFactor_->setValue(rope.highFrequencyFactor);
    original_->setValue(static_cast<int>(std::lround(rope.originalMaxPositions)));
}

void RotaryView::resetParameters() {
    const Scene& scene = document_->scene();
    setControlsFrom(scene.rotary.value_or(RopeParameters{}));
    onParametersEdited();
}

void RotaryView::onParametersEdited() {
    // Llama 3's interpolation divides by high − low: keep high above low.
    if (highFactor_->value() <= lowFactor_->value()) {
        const QSignalBlocker block(highFactor_);
        highFactor_->setValue(lowFactor_->value() + 1.0);
    }
    const RopeScaling scaling = static_cast<RopeScaling>(scaling_->currentIndex());
    factor_->setEnabled(scaling == RopeScaling::Linear || scaling == RopeScaling::Llama3);
    for (QWidget* w : std::initializer_list<QWidget*>{lowFactor_, highFactor_, original_})
        w->setEnabled(scaling == RopeScaling::Llama3);
    thetaValueLabel_->setText(tr("θ = %1").arg(QString::number(thetaValue_, 'g', 8)));
    if (!study_) return;
    study_->setParameters(parameters());
    drawCurves();
    drawFrequencies();
}

void RotaryView::setHead(int head) {
    if (head == head_ && study_) return;
    head_ = head;
    refresh();
}

void RotaryView::setQuery(int row) {
    if (row < 0 || row == queryRow_) return;
    setTokens(row, keyRow_);
}

void RotaryView::setTokens(int queryRow, int keyRow) {
    queryRow_ = queryRow;
    keyRow_ = keyRow;
    slidersFromTokens_ = true;
    refresh();
}

void RotaryView::changeEvent(QEvent* event) {
    QDialog::changeEvent(event);
    if (event->type() == QEvent::FontChange || event->type() == QEvent::ApplicationFontChange) {
        // Items are not scaled by presentation mode: their fonts follow the application's here.
        for (plot::RotaryPairChart* chart : pairCharts_) {
            chart->updateLabelFonts();
            chart->replot();
        }
        frequencies_->updateLabelFonts();
        for (plot::Chart* chart : std::initializer_list<plot::Chart*>{
                 shares_, rotaryCurves_, sinusoidalCurves_, frequencies_})
            chart->replot();
    }
}

void RotaryView::refresh() {
    refresher_->refreshed();
    const Scene& scene = document_->scene();
    study_.reset();
    problem_.clear();
    sinusoidalStart_ = -1;
    if (scene.tokens.empty()) {
        problem_ = tr("The scene has no tokens.");
    } else {
        const QSignalBlocker a(headSpin_), b(queryChoice_), c(keyChoice_);
        headSpin_->setRange(0, scene.heads - 1);
        head_ = std::clamp(head_, 0, scene.heads - 1);
        headSpin_->setValue(head_);
        if (queryRow_ < 0) {
            queryRow_ = scene.queryCount() - 1;
            slidersFromTokens_ = true;
        }
        queryRow_ = std::clamp(queryRow_, 0, scene.queryCount() - 1);
        keyRow_ = std::clamp(keyRow_, 0, scene.keyCount() - 1);
        const auto fill = [](QComboBox* box, const std::vector<std::string>& tokens, int row) {
            QStringList items;
            for (size_t t = 0; t < tokens.size(); ++t)
                items << QStringLiteral("%1: %2").arg(t).arg(QString::fromStdString(tokens[t]));
            QStringList existing;
            for (int i = 0; i < box->count(); ++i)
                existing << box->itemText(i);
            if (existing != items) {
                box->clear();
                box->addItems(items);
            }
            box->setCurrentIndex(row);
        };
        fill(queryChoice_, scene.tokens, queryRow_);
        fill(keyChoice_, scene.keyTokens(), keyRow_);
        try {
            study_ = std::make_unique<RotaryStudy>(scene, head_, queryRow_, keyRow_);
        } catch (const SceneError& e) {
            problem_ = tr("Cannot compute: %1").arg(QString::fromStdString(e.what()));
        }
        if (study_ && study_->pairCount() == 0) {
            problem_ = tr("d_head = %1: a rotation turns pairs of columns, and this head has "
                          "none. Give the scene fewer heads or wider ones.")
                           .arg(study_->headDim());
            study_.reset();
        }
    }
    problemLabel_->setText(problem_);
    problemLabel_->setVisible(!problem_.isEmpty());
    content_->setVisible(problem_.isEmpty());
    if (!study_) return;

    if (!controlsSet_ || !(scene.rotary == sceneRotary_)) {
        sceneRotary_ = scene.rotary;
        const bool longRope = scene.rotary && !scene.rotary->longRopeFactors.empty();
        if (auto* items = qobject_cast<QStandardItemModel*>(scaling_->model()))
            items->item(static_cast<int>(RopeScaling::LongRope))->setEnabled(longRope);
        setControlsFrom(study_->parameters());
        controlsSet_ = true;
    }
    if (slidersFromTokens_) {
        const QSignalBlocker a(distance_), b(start_);
        distance_->setValue(std::clamp(queryRow_ - keyRow_, -kDistanceRange, kDistanceRange));
        start_->setValue(std::min(queryRow_, keyRow_));
        slidersFromTokens_ = false;
    }
    {
        const QSignalBlocker block(firstPair_);
        firstPair_->setRange(0, std::max(0, study_->pairCount() - 1));
    }

    const RopeParameters rope = study_->parameters();
    QString scaling;
    if (rope.scaling == RopeScaling::Linear) {
        scaling = tr(", linear scaling ×%1").arg(rope.factor);
    } else if (rope.scaling == RopeScaling::Llama3) {
        scaling = tr(", llama3 scaling ×%1 (low %2, high %3, trained on %4)")
                      .arg(rope.factor)
                      .arg(rope.lowFrequencyFactor)
                      .arg(rope.highFrequencyFactor)
                      .arg(rope.originalMaxPositions);
    }
    if (rope.scaling == RopeScaling::LongRope) {
        scaling = tr(", longrope: each pair's wavelength stretched by its own factor (%1 pairs), "
                     "cos and sin × %2")
                      .arg(rope.longRopeFactors.size())
                      .arg(QString::number(rope.attentionFactor, 'g', 5));
    }
    QString note = study_->sceneHasRotary()
                       ? tr("<b>This layer's rotary positions</b>: θ = %1%2.")
                             .arg(QString::number(rope.theta, 'g', 8), scaling)
                       : tr("<b>This scene has no rotary positions</b>: shown with the default, "
                            "θ = 10000 and no scaling, as a Llama-style layer would turn these "
                            "queries and keys.");
    if (scene.positional.kind != PositionalKind::None)
        note += tr(" Its own absolute positions are left out here.");
    if (study_->sceneHasRotary() && study_->turnedDims() < study_->headDim() - 1) {
        note += tr(" <b>Partial rotary</b>: only the first %1 of the head's %2 columns turn "
                   "(%3 pairs); the other %4 carry no position.")
                    .arg(study_->turnedDims())
                    .arg(study_->headDim())
                    .arg(study_->pairCount())
                    .arg(study_->headDim() - study_->turnedDims());
    }
    if (study_->headDim() % 2 != 0)
        note += tr(" d_head = %1 is odd: its last column has no partner and is not turned.")
                    .arg(study_->headDim());
    sourceNote_->setText(note);
    onParametersEdited();
}

}  // namespace ae::ui
