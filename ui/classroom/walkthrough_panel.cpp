#include "ui/classroom/walkthrough_panel.h"

#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/model/builtin_models.h"
#include "io/model/model_folder.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "ui/classroom/refresh_when_shown.h"
#include "ui/screen_fit.h"

namespace ae::ui {

QString tourModelName() {
    return QStringLiteral("tiny-induction");
}

namespace {

// [layer, head] from about.json's "tour" object, if both are in the model.
std::optional<std::pair<int, int>> tourHead(const QJsonObject& tour, const QString& key,
                                            const model::Config& config) {
    const QJsonArray pair = tour.value(key).toArray();
    if (pair.size() != 2 || !pair[0].isDouble() || !pair[1].isDouble()) return std::nullopt;
    const int layer = pair[0].toInt(-1), head = pair[1].toInt(-1);
    if (layer < 0 || layer >= config.layers || head < 0 || head >= config.heads)
        return std::nullopt;
    return std::pair{layer, head};
}

}  // namespace

std::optional<ModelTourPlan> modelTourPlan() {
    const std::optional<io::BuiltInModel> builtIn = io::findBuiltInModel(tourModelName());
    if (!builtIn) return std::nullopt;
    QFile file(QDir(builtIn->folder).filePath(QStringLiteral("about.json")));
    if (!file.open(QIODevice::ReadOnly)) return std::nullopt;
    const QJsonObject tour =
        QJsonDocument::fromJson(file.readAll()).object().value("tour").toObject();
    try {
        const QString configFile = QDir(builtIn->folder).filePath(QStringLiteral("config.json"));
        QFile configJson(configFile);
        if (!configJson.open(QIODevice::ReadOnly)) return std::nullopt;
        const model::Config config = io::parseModelConfig(configJson.readAll(), configFile);
        const auto previous = tourHead(tour, QStringLiteral("previous_token"), config);
        const auto induction = tourHead(tour, QStringLiteral("induction"), config);
        const std::vector<long long>& ids = builtIn->about.ids;
        if (!previous || !induction || ids.size() < 4 || ids.size() % 2 != 0) return std::nullopt;
        ModelTourPlan plan;
        plan.location = io::builtInPrefix() + tourModelName();
        plan.ids = ids;
        std::tie(plan.previousLayer, plan.previousHead) = *previous;
        std::tie(plan.inductionLayer, plan.inductionHead) = *induction;
        return plan;
    } catch (const model::ModelError&) {
        return std::nullopt;  // an unreadable model is test_builtin_models's to report
    }
}

double inductionStripe(const model::Matrix<float>& weights, const std::vector<long long>& ids) {
    const long long T = static_cast<long long>(ids.size());
    const long long N = T / 2;
    if (N < 1 || T % 2 != 0 || weights.rows() != T || weights.cols() != T ||
        !std::equal(ids.begin(), ids.begin() + N, ids.begin() + N))
        return std::numeric_limits<double>::quiet_NaN();
    double sum = 0;
    for (long long i = N; i < T; ++i)
        sum += weights(i, i - N + 1);
    return sum / static_cast<double>(N);
}

WalkthroughPanel::WalkthroughPanel(document::AttentionDocument* document, plot::HeatmapGrid* grid,
                                   QWidget* parent)
    : QWidget(parent), document_(document), grid_(grid) {
    refresher_ = new RefreshWhenShown(this, [this] { refresh(); });
    setObjectName(QStringLiteral("walkthroughPanel"));
    tourChoice_ = new QComboBox(this);
    tourChoice_->setObjectName(QStringLiteral("walkthroughTour"));
    tourChoice_->addItem(tr("One attention layer, step by step"));
    tourChoice_->setToolTip(tr("Which guided tour"));
    // The longest tour name must not widen the dock (1024x768 projectors).
    tourChoice_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    // Eight characters: at presentation mode's text size sixteen were wider than the dock.
    tourChoice_->setMinimumContentsLength(8);
    connect(tourChoice_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setTour(index == 1 ? WalkTour::TrainedModel : WalkTour::Layer); });
    heading_ = new QLabel(this);
    heading_->setObjectName(QStringLiteral("walkthroughHeading"));
    QFont headingFont = heading_->font();
    headingFont.setBold(true);
    headingFont.setPointSizeF(headingFont.pointSizeF() * 1.3);
    heading_->setFont(headingFont);
    heading_->setWordWrap(true);
    formula_ = new QLabel(this);
    formula_->setObjectName(QStringLiteral("walkthroughFormula"));
    QFont formulaFont = formula_->font();
    formulaFont.setPointSizeF(formulaFont.pointSizeF() * 1.25);
    formula_->setFont(formulaFont);
    formula_->setWordWrap(true);
    formula_->setStyleSheet(QStringLiteral(
        "QLabel { background: #eef2f7; border-left: 4px solid #2166ac; padding: 6px; }"));
    explanation_ = new QLabel(this);
    explanation_->setObjectName(QStringLiteral("walkthroughText"));
    explanation_->setWordWrap(true);
    explanation_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    explanation_->setTextFormat(Qt::RichText);
    QFont textFont = explanation_->font();
    textFont.setPointSizeF(textFont.pointSizeF() * 1.15);
    explanation_->setFont(textFont);
    map_ = new plot::HeatmapController(this);
    map_->widget()->setMinimumHeight(180);
    // The map comes and goes with the steps: it must not make the dock jump in width.
    map_->widget()->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Expanding);
    // Its text wraps to the dock's width, whatever it is: no minimum of its own (one of 380
    // pixels in a dock allowed 310 cut every line on the right), and no sideways scrolling.
    setProperty(kWrapsToWidthProperty, true);
    back_ = new QPushButton(tr("◀ Back"), this);
    next_ = new QPushButton(tr("Next ▶"), this);
    back_->setToolTip(tr("Previous step (PageUp)"));
    next_->setToolTip(tr("Next step (PageDown)"));
    connect(back_, &QPushButton::clicked, this, &WalkthroughPanel::back);
    connect(next_, &QPushButton::clicked, this, &WalkthroughPanel::next);

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(back_);
    buttons->addStretch(1);
    buttons->addWidget(next_);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(tourChoice_);
    layout->addWidget(heading_);
    layout->addWidget(formula_);
    layout->addWidget(explanation_);
    layout->addWidget(map_->widget(), 1);
    layout->addStretch(0);
    layout->addLayout(buttons);

    connect(document_, &document::AttentionDocument::resultsChanged, refresher_,
            &RefreshWhenShown::changed);
    connect(grid_, &plot::HeatmapGrid::selectedRowChanged, this, &WalkthroughPanel::refresh);
}

void WalkthroughPanel::next() {
    setStep(step_ + 1);
}

void WalkthroughPanel::back() {
    setStep(step_ - 1);
}

void WalkthroughPanel::setModelSession(document::ModelSession* session) {
    session_ = session;
    plan_ = session ? modelTourPlan() : std::nullopt;
    composition_.reset();
    lossOn_.reset();
    lossOff_.reset();
    if (plan_ && tourChoice_->count() == 1)
        tourChoice_->addItem(tr("A trained model: previous-token and induction heads"));
    if (!session) return;
    connect(session, &document::ModelSession::resultsChanged, this,
            &WalkthroughPanel::onSessionResults);
    connect(session, &document::ModelSession::opened, this, &WalkthroughPanel::onSessionResults);
}

QSize WalkthroughPanel::sizeHint() const {
    // About 32 characters: narrow enough that beside the left column at 1024 pixels the maps
    // keep two columns (210 pixels at the normal text size), and growing with the text, so that
    // presentation mode's larger text still has whole words to a line. The text wraps to
    // whatever width the dock is given.
    QSize hint = QWidget::sizeHint();
    hint.setWidth(fontMetrics().averageCharWidth() * 32);
    return hint;
}

void WalkthroughPanel::setTour(WalkTour tour) {
    if (tour == WalkTour::TrainedModel && !plan_) tour = WalkTour::Layer;
    const bool changed = tour != tour_;
    tour_ = tour;
    {
        const QSignalBlocker blocker(tourChoice_);
        tourChoice_->setCurrentIndex(tour == WalkTour::TrainedModel ? 1 : 0);
    }
    actPending_ = false;
    if (tour == WalkTour::TrainedModel) grid_->setHighlightedStages({});
    if (changed || tour == WalkTour::TrainedModel) setStep(0);
}

int WalkthroughPanel::stepCount() const {
    return tour_ == WalkTour::TrainedModel ? kModelTourStepCount : kWalkStepCount;
}

bool WalkthroughPanel::tourModelIsOpen() const {
    return session_ && plan_ && session_->isOpen() && session_->builtInName() == tourModelName() &&
           session_->baseRun() && session_->baseRun()->tokens == plan_->ids;
}

void WalkthroughPanel::actOnModelTourStep() {
    if (!session_ || !plan_) return;
    if (!tourModelIsOpen()) {
        // Opening (or running the sequence) takes a moment: the step acts once the run is in.
        actPending_ = true;
        if (!session_->isOpen() || session_->builtInName() != tourModelName()) {
            emit modelRequested(plan_->location);
        } else if (!session_->isBusy() && session_->ids() != plan_->ids) {
            session_->setIds(plan_->ids);
        }
        emit modelViewRequested();
        return;
    }
    actPending_ = false;
    const ModelTourPlan& p = *plan_;
    const auto clearAblation = [this] {
        if (!document_->scene().ablation.heads.empty()) document_->setAblation({});
    };
    switch (static_cast<ModelTourStep>(step_)) {
        case ModelTourStep::Open:
        case ModelTourStep::Induction:
            session_->openHead(p.inductionLayer, p.inductionHead);
            if (p.inductionLayer == p.previousLayer) clearAblation();
            break;
        case ModelTourStep::PreviousToken:
            session_->openHead(p.previousLayer, p.previousHead);
            clearAblation();
            break;
        case ModelTourStep::Composition:
            session_->openHead(p.inductionLayer, p.inductionHead);
            clearAblation();
            emit compositionRequested();
            return;
        case ModelTourStep::SwitchOff: {
            session_->openHead(p.previousLayer, p.previousHead);
            Scene::Ablation off;
            off.heads = {p.previousHead};
            document_->setAblation(off);
            break;
        }
    }
    emit modelViewRequested();
}

void WalkthroughPanel::onSessionResults() {
    if (tour_ != WalkTour::TrainedModel) return;
    if (actPending_ && tourModelIsOpen() && !session_->isBusy()) actOnModelTourStep();
    refresher_->changed();
}

void WalkthroughPanel::setStep(int step) {
    step_ = std::clamp(step, 0, stepCount() - 1);
    if (tour_ == WalkTour::TrainedModel) {
        actOnModelTourStep();
        refresh();
        return;
    }
    if (active_) emit allStagesViewRequested();
    refresh();
    // A teacher never scrolls during a lecture: the step brings its maps into view.
    if (active_) grid_->revealHighlighted();
}

void WalkthroughPanel::setActive(bool active) {
    active_ = active;
    if (active && tour_ == WalkTour::TrainedModel) {
        refresh();
    } else if (active) {
        emit allStagesViewRequested();
        refresh();
        grid_->revealHighlighted();
    } else {
        grid_->setHighlightedStages({});
    }
}

bool WalkthroughPanel::currentStepApplies() const {
    const plot::EngineF& engine = document_->engine();
    switch (currentStep()) {
        case WalkStep::Norm:
            return engine.scene().norm.enabled;
        case WalkStep::Mask:
            return !engine.allowed().all();
        case WalkStep::OutputProjection:
            return engine.hasOutput();
        default:
            return true;
    }
}

bool WalkthroughPanel::matrixMapShown() const {
    return !map_->widget()->isHidden();
}

QString WalkthroughPanel::formulaText() const {
    return formula_->text();
}

QString WalkthroughPanel::explanationText() const {
    return explanation_->text();
}

}  // namespace ae::ui
