#include "ui/window/translation_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <set>

#include "document/translation_session.h"
#include "plot/alignment_figure.h"
#include "plot/effect_map.h"
#include "plot/head_grid.h"
#include "plot/head_summary_table.h"
#include "plot/model_panels.h"
#include "ui/files/map_export.h"

namespace ae::ui {
namespace {

using model::AttentionKind;

std::size_t slot(AttentionKind kind) {
    return static_cast<std::size_t>(kind);
}

// The heads whose weights moved by more than 0.01 in some cell between two runs of one stack.
template <typename Weights>
std::set<plot::HeadId> changedHeads(const model::ModelRun<float>& before,
                                    const model::ModelRun<float>& after, Weights weightsOf) {
    std::set<plot::HeadId> changed;
    for (std::size_t l = 0; l < before.layers.size() && l < after.layers.size(); ++l) {
        const auto& a = weightsOf(before.layers[l]);
        const auto& b = weightsOf(after.layers[l]);
        for (std::size_t h = 0; h < a.size() && h < b.size(); ++h) {
            if (a[h].rows() == b[h].rows() && a[h].cols() == b[h].cols() &&
                (a[h] - b[h]).cwiseAbs().maxCoeff() > 0.01f)
                changed.insert({static_cast<int>(l), static_cast<int>(h)});
        }
    }
    return changed;
}

}  // namespace

TranslationView::TranslationView(document::TranslationSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      grids_(new QTabWidget),
      readout_(new QLabel),
      alignmentChoice_(new QComboBox),
      predictions_(new plot::PredictionsPanel),
      table_(new QTableView),
      summaryModel_(new plot::HeadSummaryModel(this)),
      summaryFilter_(new plot::HeadSummaryFilter(this)) {
    grids_->setObjectName(QStringLiteral("translationGrids"));
    const std::pair<AttentionKind, QString> tabs[] = {
        {AttentionKind::Cross, tr("Cross-attention")},
        {AttentionKind::EncoderSelf, tr("Encoder self")},
        {AttentionKind::DecoderSelf, tr("Decoder self")}};
    for (const auto& [kind, name] : tabs) {
        auto* grid = new plot::HeadGrid;
        grid->setObjectName(QStringLiteral("%1Grid").arg(document::attentionKindName(kind)));
        grid_[slot(kind)] = grid;
        grids_->addTab(grid, name);
        connect(
            grid, &plot::HeadGrid::headActivated, this,
            [this, kind = kind](int layer, int head) { emit headActivated(kind, layer, head); });
        connect(grid, &plot::HeadGrid::hoverTextChanged, readout_, &QLabel::setText);
    }
    connect(grid_[slot(AttentionKind::Cross)], &plot::HeadGrid::currentHeadChanged, this,
            &TranslationView::showAlignment);
    readout_->setObjectName(QStringLiteral("translationReadout"));
    readout_->setWordWrap(true);
    readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* hint =
        new QLabel(tr("Double-click a head to open its layer in the explorer. A "
                      "cross-attention map's rows are the target, its columns the "
                      "source."));
    hint->setWordWrap(true);

    alignmentChoice_->setObjectName(QStringLiteral("alignmentChoice"));
    alignmentChoice_->addItems(
        {tr("The chosen head"), tr("Its layer's mean"), tr("Every layer's mean")});
    alignmentChoice_->setCurrentIndex(static_cast<int>(Alignment::EveryLayer));
    alignmentChoice_->setToolTip(
        tr("What the alignment shows: the cross-attention head chosen in "
           "the grid, the mean of its layer's heads, or of every layer's"));
    connect(alignmentChoice_, &QComboBox::currentIndexChanged, this,
            &TranslationView::showAlignment);

    auto* right = new QWidget;
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    auto* choiceRow = new QHBoxLayout;
    auto* choiceLabel = new QLabel(tr("Alignment:"));
    choiceLabel->setBuddy(alignmentChoice_);
    choiceRow->addWidget(choiceLabel);
    choiceRow->addWidget(alignmentChoice_, 1);
    rightLayout->addLayout(choiceRow);
    // The alignment gets most of the height (a projector labels every row only when they fit);
    // the predictions take the rest, and the splitter moves between them.
    auto* alignmentAndPredictions = new QSplitter(Qt::Vertical);
    alignment_ = plot::newAlignmentMap(alignmentAndPredictions);
    alignment_->widget()->setObjectName(QStringLiteral("alignmentMap"));
    alignment_->widget()->setMinimumSize(240, 200);
    alignmentAndPredictions->addWidget(alignment_->widget());
    addMapExportMenu(alignment_, this, [this](const QString& text) { readout_->setText(text); });
    predictions_->setObjectName(QStringLiteral("translationPredictions"));
    alignmentAndPredictions->addWidget(predictions_);
    alignmentAndPredictions->setStretchFactor(0, 3);
    alignmentAndPredictions->setStretchFactor(1, 1);
    alignmentAndPredictions->setChildrenCollapsible(false);
    rightLayout->addWidget(alignmentAndPredictions, 1);

    // The summaries of the grid in front: no induction or sink column (a translation makes no
    // repeated run, and value-weighted maps are the Model tab's).
    summaryFilter_->setSourceModel(summaryModel_);
    summaryModel_->setShortHeaders(true);
    summaryModel_->setDecimals(2);
    table_->setObjectName(QStringLiteral("translationSummaries"));
    table_->setModel(summaryFilter_);
    table_->setColumnHidden(plot::HeadSummaryModel::scoreColumn("induction"), true);
    table_->setColumnHidden(plot::HeadSummaryModel::scoreColumn("sink_norm"), true);
    table_->setSortingEnabled(true);
    table_->sortByColumn(plot::HeadSummaryModel::LayerColumn, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->horizontalHeader()->setMinimumSectionSize(24);
    connect(table_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        const model::HeadSummary& s =
            summaryModel_->summary(summaryFilter_->mapToSource(index).row());
        emit headActivated(kindInFront(), s.layer, s.head);
    });
    connect(grids_, &QTabWidget::currentChanged, this, &TranslationView::showSummaries);

    auto* gridsAndTable = new QSplitter(Qt::Vertical);
    gridsAndTable->addWidget(grids_);
    gridsAndTable->addWidget(table_);
    gridsAndTable->setStretchFactor(0, 3);
    gridsAndTable->setStretchFactor(1, 2);
    gridsAndTable->setChildrenCollapsible(false);
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(gridsAndTable, 1);
    leftLayout->addWidget(readout_);
    leftLayout->addWidget(hint);

    auto* splitter = new QSplitter(Qt::Horizontal);
    splitter->addWidget(left);
    splitter->addWidget(right);
    // The alignment is the figure people come for: it gets the larger share.
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(splitter);

    connect(session_, &document::TranslationSession::resultsChanged, this,
            &TranslationView::showRun);
    connect(session_, &document::TranslationSession::openHeadChanged, this,
            &TranslationView::showOpenHead);
    connect(session_, &document::TranslationSession::closed, this, &TranslationView::showRun);
}

plot::HeadGrid* TranslationView::grid(AttentionKind kind) const {
    return grid_[slot(kind)];
}

QString TranslationView::readout() const {
    return readout_->text();
}

void TranslationView::setAlignment(Alignment alignment) {
    alignmentChoice_->setCurrentIndex(static_cast<int>(alignment));
}

void TranslationView::setPresentation(bool on) {
    for (plot::HeadGrid* grid : grid_)
        grid->setPresentation(on);
    // On a projector the maps need the height; the table of numbers is for the desk.
    table_->setVisible(!on);
}

void TranslationView::showRun() {
    const auto run = session_->currentRun();
    const auto base = session_->baseRun();
    if (!run) {
        for (plot::HeadGrid* grid : grid_)
            grid->setRun(nullptr, {});
        summaryModel_->setSummaries({});
        alignment_->clear();
        predictions_->setPredictions({}, {}, {}, {});
        return;
    }
    const QStringList source = session_->sourceLabels(), target = session_->targetLabels();
    // Shared pointers into the run: the grids keep it alive as long as they draw it.
    const std::shared_ptr<const model::ModelRun<float>> encoder(run, &run->encoder);
    const std::shared_ptr<const model::ModelRun<float>> decoder(run, &run->decoder);
    grid(AttentionKind::EncoderSelf)->setRun(encoder, source);
    grid(AttentionKind::DecoderSelf)->setRun(decoder, target);
    grid(AttentionKind::Cross)->setCrossRun(decoder, target, source);
    for (AttentionKind kind :
         {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross})
        grid(kind)->setSummaries(session_->summaries(kind));
    showSummaries();
    const bool whatIf = base && run != base;
    const auto selfWeights = [](const model::LayerRecord<float>& r) -> const auto& {
        return r.weights;
    };
    const auto crossWeights = [](const model::LayerRecord<float>& r) -> const auto& {
        return r.cross.weights;
    };
    grid(AttentionKind::EncoderSelf)
        ->setChangedHeads(whatIf ? changedHeads(base->encoder, run->encoder, selfWeights)
                                 : std::set<plot::HeadId>());
    grid(AttentionKind::DecoderSelf)
        ->setChangedHeads(whatIf ? changedHeads(base->decoder, run->decoder, selfWeights)
                                 : std::set<plot::HeadId>());
    grid(AttentionKind::Cross)
        ->setChangedHeads(whatIf ? changedHeads(base->decoder, run->decoder, crossWeights)
                                 : std::set<plot::HeadId>());
    const auto tokenText = [session = session_](long long id) {
        return session->targetTokenText(id);
    };
    const int last = static_cast<int>(run->decoder.tokens.size()) - 1;
    predictions_->setPredictions(
        session_->predictions(), session_->basePredictions(), tokenText,
        tr("the target's last token, %1 “%2”").arg(last).arg(target.value(last)));
    showOpenHead();
    showAlignment();
}

model::AttentionKind TranslationView::kindInFront() const {
    for (AttentionKind kind :
         {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross})
        if (grids_->currentWidget() == grid(kind)) return kind;
    return AttentionKind::Cross;
}

void TranslationView::showSummaries() {
    std::vector<model::HeadSummary> summaries;
    if (session_->currentRun()) {
        const plot::HeadGrid* inFront = grid(kindInFront());
        for (int l = 0; l < inFront->layers(); ++l)
            for (int h = 0; h < inFront->heads(); ++h)
                summaries.push_back(inFront->summaryOf({l, h}));
    }
    summaryModel_->setSummaries(summaries);
}

void TranslationView::showOpenHead() {
    const std::optional<document::TranslationLayer> open = session_->openLayer();
    for (AttentionKind kind :
         {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf, AttentionKind::Cross}) {
        const bool here = open && open->kind == kind;
        grid(kind)->setOpenHead(here ? std::optional<plot::HeadId>({open->layer, open->head})
                                     : std::nullopt);
    }
    if (open && open->kind == AttentionKind::Cross) {
        plot::HeadGrid* cross = grid(AttentionKind::Cross);
        if (cross->layers() > open->layer && cross->heads() > open->head) {
            const QSignalBlocker blocker(cross);
            cross->setCurrentHead({open->layer, open->head});
        }
    }
}

void TranslationView::showAlignment() {
    const auto run = session_->currentRun();
    const model::Model* model = session_->model();
    if (!run || !model || run->decoder.layers.empty() || run->decoder.layers[0].cross.empty()) {
        alignment_->clear();
        return;
    }
    const auto choice = static_cast<Alignment>(alignmentChoice_->currentIndex());
    const plot::HeadId head = grid(AttentionKind::Cross)->currentHead();
    const int layer = choice == Alignment::EveryLayer ? -1 : head.first;
    const int oneHead = choice == Alignment::Head ? head.second : -1;
    std::vector<std::string> target;
    for (const QString& label : session_->targetLabels())
        target.push_back(label.toStdString());
    const auto tokenText = [session = session_](long long id) {
        return session->targetTokenText(id);
    };
    plot::showAlignment(alignment_, model->decoder->config, run->decoder, layer, oneHead,
                        plot::alignmentRowLabels(run->decoder, target, tokenText),
                        session_->sourceLabels());
}

}  // namespace ae::ui
