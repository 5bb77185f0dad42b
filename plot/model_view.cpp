#include "plot/model_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "plot/head_grid.h"
#include "plot/model_panels.h"

namespace ae::plot {

ModelView::ModelView(QWidget* parent) : QWidget(parent) {
    // Narrower than its parts need (every dock open beside it on a 1024-pixel screen), the view
    // scrolls sideways rather than push the window past the screen's edge.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("modelViewScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    auto* content = new QWidget(scroll);
    auto* layout = new QVBoxLayout(content);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* splitter = new QSplitter(Qt::Horizontal, content);
    layout->addWidget(splitter, 1);
    scroll->setWidget(content);
    outer->addWidget(scroll);

    // Left: the grid, its controls above and the read-out below.
    auto* left = new QWidget(splitter);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    auto* rangeLabel = new QLabel(tr("&Colours:"), left);
    rangeChoice_ = new QComboBox(left);
    // Short enough to be read whole beside the docks at 1024 pixels ("one range for all maps"
    // showed as "one range fo"); the tooltip says what each means.
    rangeChoice_->addItems({tr("one range"), tr("per map")});
    rangeChoice_->setToolTip(
        tr("One range: every map's colours on the same 0 to max scale, so heads compare. "
           "Per map: each map stretched over its own range, so faint patterns show."));
    rangeLabel->setBuddy(rangeChoice_);
    auto* positionLabel = new QLabel(tr("&Position:"), left);
    positionChoice_ = new QComboBox(left);
    positionChoice_->setToolTip(
        tr("The query position the predictions and the per-layer rollout read"));
    positionLabel->setBuddy(positionChoice_);
    // The combos size to a few characters, not to their longest item (a long token's text, a
    // score's name): the view then fits beside the docks on a 1024-pixel projector.
    for (QComboBox* combo : {rangeChoice_, positionChoice_}) {
        combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        combo->setMinimumContentsLength(10);
    }
    controls->addWidget(rangeLabel);
    controls->addWidget(rangeChoice_);
    controls->addSpacing(12);
    controls->addWidget(positionLabel);
    controls->addWidget(positionChoice_, 1);
    valueWeighted_ = new QCheckBox(tr("&Value-weighted"), left);
    valueWeighted_->setObjectName(QStringLiteral("valueWeighted"));
    valueWeighted_->setToolTip(
        tr("Draw how much each key moves into each query (‖α·v·W_O‖, Kobayashi et al. 2020), "
           "each row normalised, instead of how much it is looked at"));
    connect(valueWeighted_, &QCheckBox::toggled, this, &ModelView::valueWeightedToggled);
    // The sink column goes with the value-weighted maps (what moves, not where it looks): shown
    // while the box is on, so the table fits beside the docks at 1024 pixels otherwise.
    connect(valueWeighted_, &QCheckBox::toggled, this, [this](bool on) {
        table_->setColumnHidden(HeadSummaryModel::scoreColumn("sink_norm"), !on);
        fitSummaryColumns();
    });
    leftLayout->addLayout(controls);
    // A row of its own: beside the docks at 1024 pixels the first row has no room left.
    leftLayout->addWidget(valueWeighted_);
    grid_ = new HeadGrid(left);
    leftLayout->addWidget(grid_, 1);
    readout_ = new QLabel(left);
    readout_->setWordWrap(true);
    readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    readout_->setText(tr("Point at a head for its scores; double-click or Enter opens it."));
    leftLayout->addWidget(readout_);

    // Right: the summaries, rollout, predictions and query-key map.
    panels_ = new QTabWidget(splitter);
    auto* heads = new QWidget(panels_);
    auto* headsLayout = new QVBoxLayout(heads);
    headsLayout->setContentsMargins(2, 2, 2, 2);
    auto* thresholdRow = new QHBoxLayout;
    thresholdOn_ = new QCheckBox(tr("&Highlight"), heads);
    thresholdScore_ = new QComboBox(heads);
    for (const ae::model::HeadScore& score : ae::model::headScores())
        thresholdScore_->addItem(QString::fromUtf8(score.label), QString::fromUtf8(score.key));
    thresholdScore_->setCurrentIndex(thresholdScore_->findData(QStringLiteral("previous_token")));
    threshold_ = new QDoubleSpinBox(heads);
    threshold_->setRange(0.0, 20.0);
    threshold_->setDecimals(2);
    threshold_->setSingleStep(0.05);
    threshold_->setValue(0.4);
    threshold_->setPrefix(tr("> "));
    threshold_->setToolTip(tr("Highlight the heads whose score is above this"));
    onlyAbove_ = new QCheckBox(tr("list only them"), heads);
    thresholdScore_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    // "Previous token" whole: at 10 characters it read "Previous tok" at 1024 pixels.
    thresholdScore_->setMinimumContentsLength(14);
    thresholdRow->addWidget(thresholdOn_);
    thresholdRow->addWidget(thresholdScore_);
    thresholdRow->addWidget(threshold_);
    thresholdRow->addStretch(1);
    headsLayout->addLayout(thresholdRow);
    // The filter's second half and the induction button share a row: the panel stays narrow.
    auto* secondRow = new QHBoxLayout;
    measureInduction_ = new QPushButton(tr("Measure &induction"), heads);
    measureInduction_->setObjectName(QStringLiteral("measureInduction"));
    measureInduction_->setToolTip(
        tr("Runs the model on the text repeated twice for every head's induction score"));
    secondRow->addWidget(onlyAbove_);
    secondRow->addWidget(measureInduction_);
    secondRow->addStretch(1);
    headsLayout->addLayout(secondRow);
    summaryModel_ = new HeadSummaryModel(this);
    summaryFilter_ = new HeadSummaryFilter(this);
    summaryFilter_->setSourceModel(summaryModel_);
    table_ = new QTableView(heads);
    table_->setModel(summaryFilter_);
    table_->setColumnHidden(HeadSummaryModel::scoreColumn("sink_norm"), true);
    table_->setSortingEnabled(true);
    table_->sortByColumn(HeadSummaryModel::LayerColumn, Qt::AscendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    // Seven columns share the panel's width, rows as tall as their text: all of them fit beside
    // the grid on a 1024-pixel projector.
    // A number is never broken over two lines: at 1024 pixels "0.085" read "0." over "085".
    table_->setWordWrap(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    table_->horizontalHeader()->setSectionResizeMode(HeadSummaryModel::LayerColumn,
                                                     QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(HeadSummaryModel::HeadColumn,
                                                     QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setMinimumSectionSize(24);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // Stretched sections follow the header's width without sectionResized: the header's resize
    // (and the table's font, which presentation mode enlarges) is watched instead, and the fit
    // taken once the sections have their new sizes.
    table_->horizontalHeader()->installEventFilter(this);
    table_->installEventFilter(this);
    connect(table_->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this,
            &ModelView::fitSummaryColumns);
    headsLayout->addWidget(table_, 1);
    panels_->addTab(heads, tr("Heads"));
    rollout_ = new RolloutPanel(panels_);
    panels_->addTab(rollout_, tr("Rollout"));
    predictions_ = new PredictionsPanel(panels_);
    panels_->addTab(predictions_, tr("Next token"));
    queryKey_ = new QueryKeyPanel(panels_);
    panels_->addTab(queryKey_, tr("Query–key"));
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    // Beside the docks on a 1024-pixel projector both sides may be narrower than their rows
    // would like (the rows then clip their ends); the window never grows wider than the screen.
    left->setMinimumWidth(330);
    panels_->setMinimumWidth(300);

    connect(rangeChoice_, &QComboBox::currentIndexChanged, this,
            [this](int index) { setSharedRange(index == 0); });
    connect(positionChoice_, &QComboBox::activated, this,
            [this](int index) { setSelectedPosition(index); });
    connect(grid_, &HeadGrid::headActivated, this, &ModelView::headActivated);
    connect(grid_, &HeadGrid::hoverTextChanged, this, [this](const QString& text) {
        if (!text.isEmpty()) readout_->setText(text);
    });
    connect(grid_, &HeadGrid::currentHeadChanged, this, [this](int layer, int head) {
        updateQueryKey();
        // The table's selection follows the grid's head (and the grid the table's, below).
        const int row = layer * grid_->heads() + head;
        if (row >= summaryModel_->rowCount()) return;
        const QModelIndex index = summaryFilter_->mapFromSource(summaryModel_->index(row, 0));
        if (index.isValid() && table_->currentIndex().row() != index.row()) {
            table_->selectionModel()->setCurrentIndex(
                index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        }
    });
    connect(rollout_, &RolloutPanel::positionClicked, this, &ModelView::setSelectedPosition);
    // activated: a double-click, or Enter on the current row.
    connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
        const auto& s = summaryModel_->summary(summaryFilter_->mapToSource(index).row());
        emit headActivated(s.layer, s.head);
    });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& index) {
                if (!index.isValid()) return;
                const auto& s = summaryModel_->summary(summaryFilter_->mapToSource(index).row());
                grid_->setCurrentHead({s.layer, s.head});
            });
    auto thresholdChanged = [this] { updateHighlight(); };
    connect(thresholdOn_, &QCheckBox::toggled, this, thresholdChanged);
    connect(onlyAbove_, &QCheckBox::toggled, this, thresholdChanged);
    connect(threshold_, &QDoubleSpinBox::valueChanged, this, thresholdChanged);
    connect(thresholdScore_, &QComboBox::currentIndexChanged, this, [this] {
        updateHighlight();
        if (thresholdedScore().needsRepeatedRun && measureInduction_->isEnabled())
            emit summariesNeeded();
    });
    connect(measureInduction_, &QPushButton::clicked, this, [this] {
        if (!data_.inductionNote.isEmpty())
            readout_->setText(tr("Induction not measured: %1.").arg(data_.inductionNote));
        emit summariesNeeded();
    });
}

ModelView::~ModelView() = default;

void ModelView::showLayerDigest(int layer, int layers, int tokens,
                                const std::vector<ae::model::HeadDigest>& heads) {
    grid_->showLayerDigest(layer, layers, tokens, heads);
    // The table lists the heads done so far, not the last run's.
    std::vector<ae::model::HeadSummary> done;
    const int shown = grid_->layersFilled();
    for (int l = 0; l < shown; ++l)
        for (int h = 0; h < grid_->heads(); ++h)
            done.push_back(grid_->summaryOf({l, h}));
    summaryModel_->setSummaries(done);
}

void ModelView::startLayerByLayer(int layers, int heads, int tokens) {
    grid_->startLayerByLayer(layers, heads, tokens);
    summaryModel_->setSummaries({});
}

void ModelView::setData(ModelViewData data) {
    // A grid showing a pass under way (perhaps one that was cancelled) takes the run again.
    const bool newRun = data.run != data_.run || data.tokens != data_.tokens ||
                        data.valueWeighted != data_.valueWeighted || grid_->layersFilled() >= 0;
    const bool newHead = data.openHead != data_.openHead;
    const bool firstRun = data.run && !data_.run;
    data_ = std::move(data);
    const auto& run = data_.run;
    const int previousPosition = selectedPosition_;
    selectedPosition_ = resolvedPosition(data_.position);

    if (newRun) {
        grid_->setRun(run, data_.tokens, data_.valueWeighted);
        updatePositions();
        // The run first: a position set before it was clamped to the old text's length.
        rollout_->setRun(run, data_.tokens);
        rollout_->setPosition(std::max(selectedPosition_, 0));
    } else if (selectedPosition_ != previousPosition) {
        positionChoice_->setCurrentIndex(selectedPosition_);
        rollout_->setPosition(std::max(selectedPosition_, 0));
    }
    grid_->setSummaries(data_.summaries);
    summaryModel_->setSummaries(data_.summaries);
    summaryModel_->setInduction(data_.induction, data_.inductionNote);
    // A text without separator tokens (every decoder's, mostly) has no to-[SEP] score: its
    // column would be n/a all the way down, and a 1024-pixel projector has no room for it.
    const bool anySeparator =
        std::any_of(data_.summaries.begin(), data_.summaries.end(),
                    [](const ae::model::HeadSummary& s) { return !std::isnan(s.toSeparator); });
    const int separatorColumn = HeadSummaryModel::scoreColumn("to_separator");
    if (table_->isColumnHidden(separatorColumn) == anySeparator) {
        table_->setColumnHidden(separatorColumn, !anySeparator);
        fitSummaryColumns();
    }
    // Enabled while the column is not the run's own: a click measures, or says why it cannot.
    measureInduction_->setEnabled(data_.run &&
                                  data_.induction != ae::model::InductionState::Measured);
    updateHighlight();
    grid_->setChangedHeads(
        std::set<std::pair<int, int>>(data_.changedHeads.begin(), data_.changedHeads.end()));
    grid_->setOpenHead(data_.openHead);
    grid_->setPairStart(data_.pairStart);
    // The open head becomes the current one, which the query–key map draws, when it changes
    // and when the first run comes: a head opened before its run found an empty grid.
    if ((newHead || firstRun) && data_.openHead) grid_->setCurrentHead(*data_.openHead);
    // A decoder predicts the next token; an encoder with its masked-LM head fills in a token.
    const bool decoder = run && run->config.isDecoder();
    const bool fillMask = run && !decoder && run->maskedLmLogits.rows() > 0;
    const int tab = panels_->indexOf(predictions_);
    panels_->setTabVisible(tab, decoder || fillMask);
    panels_->setTabText(tab, fillMask ? tr("Predictions") : tr("Next token"));
    predictions_->setFillMask(fillMask);
    updatePredictions();
    if (newRun || newHead) updateQueryKey();
}

int ModelView::resolvedPosition(int position) const {
    const int tokens = data_.run ? static_cast<int>(data_.run->tokens.size()) : 0;
    return position >= 0 && position < tokens ? position : tokens - 1;
}

RolloutPanel* ModelView::rolloutPanel() const {
    rollout_->drawIfStale();
    return rollout_;
}

void ModelView::updatePositions() {
    positionChoice_->clear();
    const int count = data_.run ? static_cast<int>(data_.run->tokens.size()) : 0;
    for (int i = 0; i < count; ++i)
        positionChoice_->addItem(positionText(i));
    positionChoice_->setCurrentIndex(selectedPosition_);
}

QString ModelView::positionText(int position) const {
    if (position < 0) return {};
    const QString token = data_.tokens.value(position);
    return token.isEmpty() ? QString::number(position)
                           : QStringLiteral("%1 “%2”").arg(position).arg(token);
}

void ModelView::updatePredictions() {
    // The heading names the position the list was computed for, which the owner may not have
    // answered for yet when the user has just picked another.
    predictions_->setPredictions(data_.predictions, data_.basePredictions, data_.tokenText,
                                 positionText(resolvedPosition(data_.position)));
}

void ModelView::updateQueryKey() {
    const auto head = grid_->currentHead();
    queryKey_->setHead(data_.run, head.first, head.second, data_.tokens);
}

bool ModelView::eventFilter(QObject* watched, QEvent* event) {
    if ((watched == table_->horizontalHeader() && event->type() == QEvent::Resize) ||
        (watched == table_ && event->type() == QEvent::FontChange))
        QMetaObject::invokeMethod(this, &ModelView::fitSummaryColumns, Qt::QueuedConnection);
    return QWidget::eventFilter(watched, event);
}

// The score columns as the room allows, judged from the table's width shared between them (not
// from the columns' own widths, which follow the choice made here):
// - three decimals where "0.000" fits a column, else two;
// - each header in full where every word of it fits, else all in short (the tooltips hold the
//   full names): beside the grid at 1024 pixels "Previous" and "Induction" read "revious" and
//   "nductio";
// - where even "0.00" does not fit, the columns take their contents' width and the table scrolls
//   sideways: in presentation mode at 1024 pixels every score read "0.…".
void ModelView::fitSummaryColumns() {
    QHeaderView* header = table_->horizontalHeader();
    const int first = HeadSummaryModel::FirstScoreColumn,
              last = HeadSummaryModel::lastScoreColumn();
    const int fixed = header->sectionSize(HeadSummaryModel::LayerColumn) +
                      header->sectionSize(HeadSummaryModel::HeadColumn);
    int shown = 0;  // the score columns not hidden (to [SEP] on a text without separators)
    for (int column = first; column <= last; ++column)
        shown += table_->isColumnHidden(column) ? 0 : 1;
    const int room = (table_->viewport()->width() - fixed) / std::max(shown, 1);
    const QFontMetrics cells(table_->font());
    const int cellPadding = 8;  // the cell's margins and grid line, with a little to spare
    const auto numberFits = [&](const char* text) {
        return cells.horizontalAdvance(QLatin1String(text)) + cellPadding <= room;
    };
    summaryModel_->setDecimals(numberFits("0.000") ? 3 : 2);
    const bool scroll = !numberFits("0.00");
    for (int column = first; column <= last; ++column)
        header->setSectionResizeMode(column,
                                     scroll ? QHeaderView::ResizeToContents : QHeaderView::Stretch);

    const QFontMetrics names(header->font());
    const int margin = 2 * header->style()->pixelMetric(QStyle::PM_HeaderMargin, nullptr, header);
    const int sortMark = header->style()->pixelMetric(QStyle::PM_HeaderMarkSize, nullptr, header);
    bool fullNamesFit = true;
    for (int column = first; column <= last; ++column) {
        if (table_->isColumnHidden(column)) continue;
        const int nameRoom =
            room - margin - (header->sortIndicatorSection() == column ? sortMark : 0);
        const QString name = QString::fromUtf8(HeadSummaryModel::scoreOf(column).label);
        for (const QString& word : name.split(QLatin1Char(' ')))
            fullNamesFit = fullNamesFit && names.horizontalAdvance(word) <= nameRoom;
    }
    summaryModel_->setShortHeaders(!fullNamesFit);
}

const ae::model::HeadScore& ModelView::thresholdedScore() const {
    return ae::model::headScore(thresholdScore_->currentData().toString().toStdString());
}

void ModelView::updateHighlight() {
    highlighted_ = thresholdOn_->isChecked()
                       ? headsAbove(data_.summaries, thresholdedScore(), threshold_->value())
                       : std::set<std::pair<int, int>>();
    grid_->setHighlighted(highlighted_);
    summaryModel_->setHighlighted(highlighted_);
    summaryFilter_->setOnlyHighlighted(thresholdOn_->isChecked() && onlyAbove_->isChecked());
}

void ModelView::setThreshold(bool on, const ae::model::HeadScore& score, double threshold,
                             bool onlyAbove) {
    const QSignalBlocker blockers[] = {QSignalBlocker(thresholdOn_), QSignalBlocker(threshold_),
                                       QSignalBlocker(thresholdScore_), QSignalBlocker(onlyAbove_)};
    thresholdOn_->setChecked(on);
    thresholdScore_->setCurrentIndex(thresholdScore_->findData(QString::fromUtf8(score.key)));
    threshold_->setValue(threshold);
    onlyAbove_->setChecked(onlyAbove);
    updateHighlight();
}

void ModelView::setSharedRange(bool shared) {
    rangeChoice_->setCurrentIndex(shared ? 0 : 1);
    grid_->setRangeMode(shared ? HeadGrid::RangeMode::Shared : HeadGrid::RangeMode::PerMap);
}

QString ModelView::readout() const {
    return readout_->text();
}

void ModelView::setPresentation(bool on) {
    presentation_ = on;
    grid_->setPresentation(on);
    queryKey_->setPresentation(on);
}

void ModelView::setSelectedPosition(int position) {
    position = resolvedPosition(position);
    if (position == selectedPosition_) return;
    selectedPosition_ = position;
    positionChoice_->setCurrentIndex(position);
    rollout_->setPosition(position);
    emit positionSelected(position);
}

}  // namespace ae::plot
