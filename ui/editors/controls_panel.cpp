#include "ui/editors/controls_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <limits>

#include "core/key_value_heads.h"
#include "document/attention_document.h"

namespace ae::ui {
namespace {

constexpr double kBigNegativeFill = -1e20;

int divisorToPosition(double divisor) {
    const double p = (std::log10(divisor) - std::log10(ControlsPanel::kMinDivisor)) * 100.0;
    return std::clamp(static_cast<int>(std::lround(p)), 0, ControlsPanel::kScaleSteps);
}

double positionToDivisor(int position) {
    return ControlsPanel::kMinDivisor * std::pow(10.0, position / 100.0);
}

QSlider* makeSlider(const QString& name, QWidget* parent) {
    auto* slider = new QSlider(Qt::Horizontal, parent);
    slider->setObjectName(name);
    slider->setPageStep(1);
    return slider;
}

// The numbers under the scaling slider's ticks (one a decade): the first flush left, the last
// flush right and the middle ones centred under their ticks, as the slider's handle travels.
QWidget* makeDecadeLabels(QWidget* parent) {
    auto* row = new QWidget(parent);
    row->setObjectName(QStringLiteral("scaleTickLabels"));
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    const int decades = ControlsPanel::kScaleSteps / 100;
    for (int d = 0; d <= decades; ++d) {
        const double divisor = positionToDivisor(d * 100);
        auto* label = new QLabel(QString::number(divisor, 'g', 3), row);
        label->setObjectName(QStringLiteral("scaleTick%1").arg(d));
        label->setAlignment(d == 0         ? Qt::AlignLeft
                            : d == decades ? Qt::AlignRight
                                           : Qt::AlignHCenter);
        // Equal stretch for the middle labels, half for the ends: centres fall on the ticks.
        layout->addWidget(label, d == 0 || d == decades ? 1 : 2);
    }
    return row;
}

}  // namespace

ControlsPanel::ControlsPanel(document::AttentionDocument* document, QWidget* parent)
    : QWidget(parent), document_(document) {
    auto* layout = new QVBoxLayout(this);

    // What this layer does beyond the plain recipe (its positions, a soft-cap): set by the window,
    // which knows the model a layer came from.
    layerFeatures_ = new QLabel(this);
    layerFeatures_->setObjectName(QStringLiteral("layerFeatures"));
    layerFeatures_->setWordWrap(true);
    layerFeatures_->setStyleSheet(
        QStringLiteral("QLabel { background: #eef3fb; border: 1px solid #b8c7e0; padding: 4px; }"));
    layerFeatures_->hide();
    layout->addWidget(layerFeatures_);

    auto* headsBox = new QGroupBox(tr("Heads"), this);
    auto* headsLayout = new QVBoxLayout(headsBox);
    heads_ = makeSlider(QStringLiteral("headSlider"), headsBox);
    heads_->setTickPosition(QSlider::TicksBelow);
    heads_->setToolTip(
        tr("Number of heads: only divisors of d_proj, so every head is d_proj / H wide"));
    headsLabel_ = new QLabel(headsBox);
    headsLabel_->setObjectName(QStringLiteral("headsLabel"));
    headsMessage_ = new QLabel(headsBox);
    headsMessage_->setObjectName(QStringLiteral("headsMessage"));
    headsMessage_->setWordWrap(true);
    headsMessage_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    headsMessage_->setStyleSheet(
        QStringLiteral("QLabel { background: #fff4ce; color: #3b2f00; border: 1px solid #d8b94a; "
                       "padding: 4px; }"));
    headsMessage_->hide();
    headsLayout->addWidget(headsLabel_);
    headsLayout->addWidget(heads_);
    // Key/value heads (issue 17). Offered on every scene with separate projections, version 1
    // included: teachers start from the built-in (version 1) scenes, and a kv count below the
    // head count only makes the scene version 2 when saved, as switching a head off already does
    // (Scene::usesVersion2); disabling it there would hide grouped-query attention behind opening
    // a model.
    kvHeadsLabel_ = new QLabel(headsBox);
    kvHeadsLabel_->setObjectName(QStringLiteral("kvHeadsLabel"));
    kvHeadsLabel_->setWordWrap(true);
    kvHeads_ = makeSlider(QStringLiteral("kvHeadsSlider"), headsBox);
    kvHeads_->setTickPosition(QSlider::TicksBelow);
    headsLayout->addWidget(kvHeadsLabel_);
    headsLayout->addWidget(kvHeads_);
    headsLayout->addWidget(headsMessage_);
    layout->addWidget(headsBox);

    auto* scaleBox = new QGroupBox(tr("Scaling"), this);
    auto* scaleLayout = new QVBoxLayout(scaleBox);
    scaleLabel_ = new QLabel(scaleBox);
    scale_ = makeSlider(QStringLiteral("scaleSlider"), scaleBox);
    scale_->setRange(0, kScaleSteps);
    scale_->setPageStep(10);
    scale_->setTickPosition(QSlider::TicksBelow);
    scale_->setTickInterval(100);  // one tick per decade: 0.1, 1, 10, 100
    scale_->setToolTip(
        tr("Divisor of the scores, 0.1 to 100 on a log scale (ticks at 0.1, 1, 10, 100)"));
    auto* buttons = new QHBoxLayout;
    sqrtDk_ = new QPushButton(QStringLiteral("√d_k"), scaleBox);
    sqrtDmodel_ = new QPushButton(QStringLiteral("√d_model"), scaleBox);
    none_ = new QPushButton(QStringLiteral("1"), scaleBox);
    sqrtDk_->setToolTip(tr("Divide by √d_k (d_k = d_head), as in the Transformer paper"));
    sqrtDmodel_->setToolTip(tr("Divide by √d_model"));
    none_->setToolTip(tr("No scaling: divide by 1"));
    for (QPushButton* b : {sqrtDk_, sqrtDmodel_, none_}) {
        b->setCheckable(true);
        buttons->addWidget(b);
    }
    scaleLayout->addWidget(scaleLabel_);
    scaleLayout->addWidget(scale_);
    scaleLayout->addWidget(makeDecadeLabels(scaleBox));
    scaleLayout->addLayout(buttons);
    layout->addWidget(scaleBox);

    auto* maskBox = new QGroupBox(tr("Mask"), this);
    auto* maskLayout = new QFormLayout(maskBox);
    causal_ = new QCheckBox(tr("causal (no looking ahead)"), maskBox);
    causal_->setObjectName(QStringLiteral("causalCheck"));
    window_ = makeSlider(QStringLiteral("windowSlider"), maskBox);
    window_->setToolTip(tr("Each query sees keys at most this far away; leftmost is off"));
    windowLabel_ = new QLabel(maskBox);
    fill_ = new QComboBox(maskBox);
    fill_->setObjectName(QStringLiteral("fillCombo"));
    fill_->addItem(QStringLiteral("−inf"));
    fill_->addItem(QStringLiteral("−1e20"));
    fill_->addItem(tr("custom value"));
    fill_->setToolTip(tr("What masked scores become before the softmax"));
    fillValue_ = new QDoubleSpinBox(maskBox);
    fillValue_->setObjectName(QStringLiteral("fillSpin"));
    fillValue_->setRange(-1e9, 1e9);
    fillValue_->setDecimals(2);
    fillValue_->setKeyboardTracking(false);  // one edit per typed number, not per keystroke
    clearCustom_ = new QPushButton(tr("Clear custom mask"), maskBox);
    clearCustom_->setToolTip(tr("Forget the cells hidden in mask edit mode"));
    maskLayout->addRow(causal_);
    maskLayout->addRow(windowLabel_);
    maskLayout->addRow(window_);
    maskLayout->addRow(tr("Fill"), fill_);
    maskLayout->addRow(tr("Value"), fillValue_);
    maskLayout->addRow(clearCustom_);
    layout->addWidget(maskBox);

    auto* offBox = new QGroupBox(tr("Switch heads off"), this);
    offBox->setObjectName(QStringLiteral("headsOffBox"));
    offBox->setToolTip(
        tr("A switched-off head's output (weights · V) is replaced before W_O; in a "
           "model, every later layer follows"));
    auto* offLayout = new QVBoxLayout(offBox);
    headSwitchGrid_ = new QGridLayout;
    headSwitchGrid_->setSpacing(2);
    ablationMode_ = new QComboBox(offBox);
    ablationMode_->setObjectName(QStringLiteral("ablationModeCombo"));
    ablationMode_->addItem(tr("by zeros"));
    ablationMode_->addItem(tr("by its mean over positions"));
    ablationMode_->setToolTip(tr("What a switched-off head's output becomes"));
    offLayout->addLayout(headSwitchGrid_);
    offLayout->addWidget(ablationMode_);
    layout->addWidget(offBox);
    layout->addStretch(1);

    for (QSlider* s : {heads_, kvHeads_, scale_, window_})
        connectDrag(s);
    connect(heads_, &QSlider::valueChanged, this, &ControlsPanel::applyHeads);
    connect(kvHeads_, &QSlider::valueChanged, this, &ControlsPanel::applyKeyValueHeads);
    connect(scale_, &QSlider::valueChanged, this, &ControlsPanel::applyDivisor);
    connect(window_, &QSlider::valueChanged, this, &ControlsPanel::applyWindow);
    connect(sqrtDk_, &QPushButton::clicked, this, [this] {
        document_->setScale({ScaleKind::SqrtDk, 1.0});
    });
    connect(sqrtDmodel_, &QPushButton::clicked, this, [this] {
        document_->setScale({ScaleKind::SqrtDmodel, 1.0});
    });
    connect(none_, &QPushButton::clicked, this, [this] {
        document_->setScale({ScaleKind::None, 1.0});
    });
    connect(causal_, &QCheckBox::toggled, this, [this](bool on) {
        Mask mask = document_->scene().mask;
        mask.causal = on;
        document_->setMask(mask);
    });
    connect(clearCustom_, &QPushButton::clicked, this, [this] {
        Mask mask = document_->scene().mask;
        mask.allowed.reset();
        document_->setMask(mask);
    });
    connect(ablationMode_, &QComboBox::currentIndexChanged, this, &ControlsPanel::applyAblation);
    connect(fill_, &QComboBox::currentIndexChanged, this, &ControlsPanel::applyFill);
    connect(fillValue_, &QDoubleSpinBox::valueChanged, this, &ControlsPanel::applyFill);
    connect(document_, &document::AttentionDocument::resultsChanged, this,
            &ControlsPanel::syncFromDocument);
    // A refused head count is about the scene it was refused for: a new structure clears it.
    connect(document_, &document::AttentionDocument::structureChanged, headsMessage_, [this] {
        headsMessage_->clear();
        headsMessage_->hide();
    });
    syncFromDocument();
}

void ControlsPanel::connectDrag(QSlider* slider) {
    connect(slider, &QSlider::sliderPressed, document_,
            &document::AttentionDocument::beginInteraction);
    connect(slider, &QSlider::sliderReleased, document_,
            &document::AttentionDocument::endInteraction);
}

QString ControlsPanel::headsMessage() const {
    return headsMessage_->text();
}

void ControlsPanel::applyHeads(int position) {
    if (position < 0 || position >= static_cast<int>(headChoices_.size())) return;
    const int heads = headChoices_[static_cast<size_t>(position)];
    if (heads == document_->scene().heads) return;
    QString error;
    if (document_->setHeads(heads, &error)) {
        headsMessage_->clear();
        headsMessage_->hide();
        return;
    }
    if (error.isEmpty()) return;
    const QString message = tr("%1 heads refused: %2").arg(heads).arg(error);
    headsMessage_->setText(message);
    headsMessage_->show();
    emit messageRequested(message);
    syncFromDocument();  // the slider goes back to the head count the scene still has
}

void ControlsPanel::applyKeyValueHeads(int position) {
    if (position < 0 || position >= static_cast<int>(kvChoices_.size())) return;
    const int kvHeads = kvChoices_[static_cast<size_t>(position)];
    if (kvHeads == document_->scene().keyValueHeads()) return;
    QString error;
    if (document_->setKeyValueHeads(kvHeads, &error)) {
        headsMessage_->clear();
        headsMessage_->hide();
        return;
    }
    if (error.isEmpty()) return;
    const QString message = tr("%1 kv heads refused: %2").arg(kvHeads).arg(error);
    headsMessage_->setText(message);
    headsMessage_->show();
    emit messageRequested(message);
    syncFromDocument();
}

void ControlsPanel::syncKeyValueHeads() {
    const Scene& scene = document_->scene();
    const int kv = scene.keyValueHeads();
    kvChoices_ = keyValueHeadChoices(scene.heads);
    kvHeads_->setRange(0, static_cast<int>(kvChoices_.size()) - 1);
    const auto at = std::find(kvChoices_.begin(), kvChoices_.end(), kv);
    kvHeads_->setValue(static_cast<int>(at - kvChoices_.begin()));
    const bool separate = scene.projections.mode == ProjectionMode::Separate;
    kvHeads_->setEnabled(separate && scene.heads > 1);
    const int groupSize = scene.heads / kv;
    kvHeadsLabel_->setText(
        tr("<b>%1</b> kv head%2 · %3")
            .arg(kv)
            .arg(kv == 1 ? QString() : QStringLiteral("s"))
            .arg(QString::fromStdString(keyValueRegimeName(scene.heads, kv)) +
                 (groupSize > 1 && kv > 1 ? tr(", %1 heads share each K and V").arg(groupSize)
                                          : QString())));
    QString why;
    if (!separate) {
        why = tr("Kv heads need separate W_Q, W_K and W_V (here %1): set the projection mode to "
                 "separate in the Weights panel")
                  .arg(scene.projections.mode == ProjectionMode::Identity ? tr("Q = K = V = X")
                                                                          : tr("K is W_Q"));
    } else if (scene.heads == 1) {
        why = tr("One head has one K and V: with more heads, groups of them can share theirs");
    } else {
        why = tr("Key/value heads (grouped-query attention, as in Llama, Qwen, Mistral): the query "
                 "heads of a group read the same K and V. Fewer kv heads: each is the mean of its "
                 "group's W_K and W_V columns (Ainslie et al. 2023); more again gives back the "
                 "weights you had. From %1 (multi-head) to 1 (multi-query).")
                  .arg(scene.heads);
    }
    kvHeads_->setToolTip(why);
    kvHeadsLabel_->setToolTip(why);
}

void ControlsPanel::applyDivisor(int position) {
    document_->setScale({ScaleKind::Divisor, positionToDivisor(position)});
}

void ControlsPanel::applyWindow(int position) {
    Mask mask = document_->scene().mask;
    mask.window = position == 0 ? std::nullopt : std::optional<int>(position - 1);
    document_->setMask(mask);
}

void ControlsPanel::applyFill() {
    const int choice = fill_->currentIndex();
    fillValue_->setEnabled(choice == 2);
    const double fill = choice == 0   ? -std::numeric_limits<double>::infinity()
                        : choice == 1 ? kBigNegativeFill
                                      : fillValue_->value();
    if (fill != document_->scene().maskFill) document_->setMaskFill(fill);
}

void ControlsPanel::applyAblation() {
    Scene::Ablation ablation;
    for (std::size_t h = 0; h < headSwitches_.size(); ++h) {
        if (headSwitches_[h]->isChecked()) ablation.heads.push_back(static_cast<int>(h));
    }
    ablation.byMean = ablationMode_->currentIndex() == 1;
    // The mode alone is no change while no head is off.
    if (ablation.heads.empty()) ablation.byMean = document_->scene().ablation.byMean;
    document_->setAblation(ablation);
}

void ControlsPanel::rebuildHeadSwitches(int heads) {
    for (QToolButton* b : headSwitches_)
        delete b;
    headSwitches_.clear();
    constexpr int kPerRow = 8;
    for (int h = 0; h < heads; ++h) {
        auto* b = new QToolButton(this);
        b->setObjectName(QStringLiteral("headOff%1").arg(h));
        b->setText(QString::number(h));
        b->setCheckable(true);
        b->setToolTip(tr("Switch head %1 off (pressed) or on").arg(h));
        b->setStyleSheet(
            QStringLiteral("QToolButton:checked { background: #b71c1c; color: white; "
                           "text-decoration: line-through; }"));
        connect(b, &QToolButton::toggled, this, &ControlsPanel::applyAblation);
        headSwitchGrid_->addWidget(b, h / kPerRow, h % kPerRow);
        headSwitches_.push_back(b);
    }
}

void ControlsPanel::syncFromDocument() {
    const Scene& scene = document_->scene();
    if (scene.tokens.empty()) return;
    const QSignalBlocker b1(heads_), b2(scale_), b3(window_), b4(causal_), b5(fill_),
        b6(fillValue_), b7(sqrtDk_), b8(sqrtDmodel_), b9(none_), b10(ablationMode_), b11(kvHeads_);
    if (static_cast<int>(headSwitches_.size()) != scene.heads) rebuildHeadSwitches(scene.heads);
    for (std::size_t h = 0; h < headSwitches_.size(); ++h) {
        const QSignalBlocker blocker(headSwitches_[h]);
        const auto& off = scene.ablation.heads;
        headSwitches_[h]->setChecked(std::find(off.begin(), off.end(), static_cast<int>(h)) !=
                                     off.end());
    }
    ablationMode_->setCurrentIndex(scene.ablation.byMean ? 1 : 0);

    headChoices_.clear();
    const int dProj = scene.dProj();
    for (int h = 1; h <= dProj; ++h) {
        if (dProj % h == 0) headChoices_.push_back(h);
    }
    heads_->setRange(0, static_cast<int>(headChoices_.size()) - 1);
    const auto at = std::find(headChoices_.begin(), headChoices_.end(), scene.heads);
    heads_->setValue(static_cast<int>(at - headChoices_.begin()));
    headsLabel_->setText(tr("<b>%1</b> head%2 · d_head = <b>%3</b> (d_proj = %4)")
                             .arg(scene.heads)
                             .arg(scene.heads == 1 ? QString() : QStringLiteral("s"))
                             .arg(scene.dHead())
                             .arg(dProj));
    syncKeyValueHeads();

    const double divisor = scene.divisor();
    scale_->setValue(divisorToPosition(divisor));
    QString kind;
    switch (scene.scale.kind) {
        case ScaleKind::SqrtDk:
            kind = QStringLiteral(" = √d_k = √%1").arg(scene.dHead());
            break;
        case ScaleKind::SqrtDmodel:
            kind = QStringLiteral(" = √d_model = √%1").arg(scene.dModel());
            break;
        case ScaleKind::None:
            kind = tr(" (no scaling)");
            break;
        case ScaleKind::Divisor:
            break;
    }
    scaleLabel_->setText(
        tr("Divide scores by <b>%1</b>%2").arg(QString::number(divisor, 'g', 4), kind));
    sqrtDk_->setChecked(scene.scale.kind == ScaleKind::SqrtDk);
    sqrtDmodel_->setChecked(scene.scale.kind == ScaleKind::SqrtDmodel);
    none_->setChecked(scene.scale.kind == ScaleKind::None);

    causal_->setChecked(scene.mask.causal);
    const int longest = std::max(scene.queryCount(), scene.keyCount());
    window_->setRange(0, longest);
    window_->setValue(scene.mask.window ? std::min(*scene.mask.window + 1, longest) : 0);
    // With the causal part, window w is a model's sliding window of W = w + 1 keys.
    windowLabel_->setText(!scene.mask.window ? tr("Window: <b>off</b>")
                          : scene.mask.causal
                              ? tr("Sliding window: the last <b>W = %1</b> keys (hatched ╲)")
                                    .arg(*scene.mask.window + 1)
                              : tr("Window: keys within <b>±%1</b>").arg(*scene.mask.window));
    const double fill = scene.maskFill;
    const int choice = std::isinf(fill) ? 0 : fill == kBigNegativeFill ? 1 : 2;
    fill_->setCurrentIndex(choice);
    if (choice == 2) fillValue_->setValue(fill);
    fillValue_->setEnabled(choice == 2);
    clearCustom_->setEnabled(scene.mask.allowed.has_value());
}

void ControlsPanel::setLayerFeatures(const QStringList& lines) {
    layerFeatures_->setText(lines.join(QStringLiteral("<br>")));
    layerFeatures_->setVisible(!lines.isEmpty());
}

}  // namespace ae::ui
