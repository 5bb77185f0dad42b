#include "ui/window/workbench_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStackedWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "document/model_session.h"
#include "document/workbench_session.h"
#include "io/formats/result_export.h"
#include "plot/effect_map.h"
#include "plot/image_export.h"
#include "plot/workbench_charts.h"
#include "ui/files/export_dialog.h"
#include "ui/files/map_export.h"

namespace ae::ui {

namespace {

using document::WorkbenchMode;

const WorkbenchMode kModes[] = {WorkbenchMode::Patching, WorkbenchMode::Lens,
                                WorkbenchMode::Attribution, WorkbenchMode::Composition};

QStringList layerLabels(int layers, const QString& prefix = QStringLiteral("L")) {
    QStringList labels;
    for (int l = 0; l < layers; ++l)
        labels << prefix + QString::number(l);
    return labels;
}

QStringList headLabels(int heads) {
    QStringList labels;
    for (int h = 0; h < heads; ++h)
        labels << QStringLiteral("H%1").arg(h);
    return labels;
}

std::vector<std::vector<double>> rowsOf(const model::Matrix<float>& m) {
    std::vector<std::vector<double>> rows(static_cast<std::size_t>(m.rows()));
    for (Eigen::Index r = 0; r < m.rows(); ++r)
        for (Eigen::Index c = 0; c < m.cols(); ++c)
            rows[static_cast<std::size_t>(r)].push_back(m(r, c));
    return rows;
}

QString number(double value) {
    return QString::number(value, 'g', 4);
}

}  // namespace

WorkbenchPanel::WorkbenchPanel(document::ModelSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      workbench_(new document::WorkbenchSession(session, this)) {
    setObjectName(QStringLiteral("workbench"));
    mode_ = new QComboBox(this);
    mode_->setObjectName(QStringLiteral("workbenchMode"));
    mode_->addItem(tr("Activation patching"));
    mode_->addItem(tr("Logit lens"));
    mode_->addItem(tr("Direct logit attribution"));
    mode_->addItem(tr("Composition"));
    mode_->setToolTip(tr("The analysis"));
    // Narrow beside the docks: the combo shrinks to a few letters rather than widen the tab.
    mode_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    mode_->setMinimumContentsLength(10);
    position_ = new QSpinBox(this);
    position_->setObjectName(QStringLiteral("workbenchPosition"));
    position_->setRange(-1, 4095);
    position_->setSpecialValueText(tr("last"));
    position_->setToolTip(tr("The position whose prediction the metric reads"));
    run_ = new QPushButton(tr("Run"), this);
    run_->setObjectName(QStringLiteral("runPatching"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setEnabled(false);
    // Explicit small minimums (not the style's): the tab fits beside the walkthrough dock.
    run_->setMinimumWidth(48);
    cancel_->setMinimumWidth(56);
    position_->setMinimumWidth(48);

    corrupted_ = new QLineEdit(this);
    corrupted_->setObjectName(QStringLiteral("corruptedPrompt"));
    corrupted_->setPlaceholderText(
        tr("The model's text with a few tokens changed (ids without a tokenizer)"));
    target_ = new QLineEdit(this);
    target_->setObjectName(QStringLiteral("patchTarget"));
    target_->setPlaceholderText(tr("a token, or #id"));
    foil_ = new QLineEdit(this);
    foil_->setObjectName(QStringLiteral("patchFoil"));
    foil_->setPlaceholderText(tr("optional: answer − foil"));
    target_->setMinimumWidth(60);
    foil_->setMinimumWidth(60);
    targetToken_ = new QLabel(this);
    targetToken_->setObjectName(QStringLiteral("targetToken"));
    foilToken_ = new QLabel(this);
    foilToken_->setObjectName(QStringLiteral("foilToken"));
    const auto picker = [this](QLineEdit* field, const QString& name) {
        auto* button = new QToolButton(this);
        button->setObjectName(name);
        button->setText(tr("▾"));
        button->setToolTip(tr("Pick from the model's top predictions"));
        button->setPopupMode(QToolButton::InstantPopup);
        auto* menu = new QMenu(button);
        connect(menu, &QMenu::aboutToShow, this, [this, menu, field] {
            menu->clear();
            const auto& predictions = session_->analysis().predictions;
            if (predictions.empty()) menu->addAction(tr("No predictions yet"))->setEnabled(false);
            for (const model::Prediction& p : predictions) {
                const QString pick = QStringLiteral("#%1").arg(p.token);
                QAction* action = menu->addAction(tr("%1   %2%")
                                                      .arg(session_->tokenLabel(p.token))
                                                      .arg(100 * p.probability, 0, 'f', 1));
                connect(action, &QAction::triggered, this, [this, field, pick] {
                    field->setText(pick);
                    commit();
                });
            }
        });
        button->setMenu(menu);
        return button;
    };
    pickTarget_ = picker(target_, QStringLiteral("pickTarget"));
    pickFoil_ = picker(foil_, QStringLiteral("pickFoil"));

    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1000);
    progress_->setTextVisible(false);
    progress_->setMaximumHeight(12);
    changes_ = new QLabel(this);
    changes_->setObjectName(QStringLiteral("patchChanges"));
    status_ = new QLabel(this);
    status_->setObjectName(QStringLiteral("patchStatus"));
    status_->setWordWrap(true);
    status_->setMinimumHeight(2 * status_->fontMetrics().lineSpacing() + 4);
    status_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Minimum);
    edited_ = new QLabel(this);
    edited_->setObjectName(QStringLiteral("editedNote"));
    edited_->setWordWrap(true);
    edited_->setStyleSheet(QStringLiteral(
        "QLabel { background: #fde8c8; color: #5a3300; padding: 3px; border-radius: 3px; }"));
    edited_->hide();

    auto* top = new QHBoxLayout;
    top->addWidget(mode_, 2);
    top->addWidget(new QLabel(tr("Position"), this));
    top->addWidget(position_);
    top->addStretch(1);
    top->addWidget(run_);
    top->addWidget(cancel_);
    auto* tokens = new QHBoxLayout;
    tokens->addWidget(new QLabel(tr("Answer"), this));
    tokens->addWidget(target_, 1);
    tokens->addWidget(pickTarget_);
    tokens->addWidget(targetToken_);
    tokens->addWidget(new QLabel(tr("Foil"), this));
    tokens->addWidget(foil_, 1);
    tokens->addWidget(pickFoil_);
    tokens->addWidget(foilToken_);
    auto* corruptedRow = new QHBoxLayout;
    corruptedLabel_ = new QLabel(tr("Corrupted prompt"), this);
    corruptedRow->addWidget(corruptedLabel_);
    corruptedRow->addWidget(corrupted_, 1);

    // Small minimums: the tab must fit beside the docks of a 1024 x 768 window.
    const auto sized = [](auto* chart, const char* name) {
        chart->widget()->setObjectName(QLatin1String(name));
        chart->widget()->setMinimumSize(120, 130);
        return chart;
    };
    using Scale = plot::EffectMap::Scale;
    heads_ = sized(new plot::EffectMap(tr("Head outputs"), this), "headsEffectMap");
    pattern_ = sized(new plot::EffectMap(tr("Patterns only"), this), "patternEffectMap");
    residual_ = sized(new plot::EffectMap(tr("Residual stream"), this), "residualEffectMap");
    cleanPattern_ =
        sized(new plot::EffectMap(tr("Clean pattern"), this, Scale::Sequential, tr("weight")),
              "cleanPatternMap");
    corruptPattern_ =
        sized(new plot::EffectMap(tr("Corrupted"), this, Scale::Sequential, tr("weight")),
              "corruptPatternMap");
    openHead_ = new QPushButton(tr("Open in the explorer"), this);
    openHead_->setObjectName(QStringLiteral("openHeadInExplorer"));
    openHead_->setEnabled(false);
    lens_ = sized(new plot::EffectMap(tr("Top token entering each layer"), this, Scale::Sequential,
                                      tr("probability")),
                  "lensMap");
    lensCurve_ = sized(new plot::LineChart(this), "lensCurve");
    lensMeasure_ = new QComboBox(this);
    lensMeasure_->setObjectName(QStringLiteral("lensMeasure"));
    lensMeasure_->addItem(tr("Curve: probability"));
    lensMeasure_->addItem(tr("Curve: logit difference (answer − foil)"));
    attribution_ = sized(
        new plot::EffectMap(tr("Each head's part"), this, Scale::Diverging, tr("logit difference")),
        "attributionMap");
    attribution_->setFreeRange(true);
    attributionBars_ = sized(new plot::BarChart(this), "attributionBars");
    compositionKind_ = new QComboBox(this);
    compositionKind_->setObjectName(QStringLiteral("compositionKind"));
    compositionKind_->addItem(tr("Q-composition"), QStringLiteral("q"));
    compositionKind_->addItem(tr("K-composition"), QStringLiteral("k"));
    compositionKind_->addItem(tr("V-composition"), QStringLiteral("v"));
    composition_ =
        sized(new plot::EffectMap(tr("Composition"), this, Scale::Sequential, tr("score")),
              "compositionMap");
    composition_->setFreeRange(true);
    compositionHistogram_ = sized(new plot::BarChart(this), "compositionHistogram");
    for (plot::EffectMap* map : {heads_, pattern_, residual_, cleanPattern_, corruptPattern_, lens_,
                                 attribution_, composition_})
        addMapExportMenu(map, this, [this](const QString& text) { status_->setText(text); });

    pages_ = new QStackedWidget(this);
    auto* patching = new QWidget(pages_);
    auto* patchingGrid = new QGridLayout(patching);
    patchingGrid->setContentsMargins(0, 0, 0, 0);
    // The head clicked beside the residual stream: its pattern on both texts, one colour scale.
    patchingGrid->addWidget(heads_->widget(), 0, 0, 1, 2);
    patchingGrid->addWidget(pattern_->widget(), 0, 2, 1, 2);
    patchingGrid->addWidget(residual_->widget(), 1, 0, 1, 2);
    patchingGrid->addWidget(cleanPattern_->widget(), 1, 2);
    patchingGrid->addWidget(corruptPattern_->widget(), 1, 3);
    patchingGrid->addWidget(openHead_, 2, 2, 1, 2, Qt::AlignRight);
    // The corrupted pattern carries the colour scale both share: a little wider.
    for (int column = 0; column < 4; ++column)
        patchingGrid->setColumnStretch(column, column == 2 ? 4 : 5);
    cleanPattern_->setColourScaleShown(false);
    pages_->addWidget(patching);
    auto* lensPage = new QWidget(pages_);
    auto* lensLayout = new QVBoxLayout(lensPage);
    lensLayout->setContentsMargins(0, 0, 0, 0);
    lensLayout->addWidget(lens_->widget(), 3);
    lensLayout->addWidget(lensMeasure_, 0, Qt::AlignLeft);
    lensLayout->addWidget(lensCurve_->widget(), 2);
    pages_->addWidget(lensPage);
    auto* attributionPage = new QWidget(pages_);
    auto* attributionLayout = new QVBoxLayout(attributionPage);
    attributionLayout->setContentsMargins(0, 0, 0, 0);
    attributionLayout->addWidget(attribution_->widget(), 1);
    attributionLayout->addWidget(attributionBars_->widget(), 1);
    pages_->addWidget(attributionPage);
    auto* compositionPage = new QWidget(pages_);
    auto* compositionLayout = new QVBoxLayout(compositionPage);
    compositionLayout->setContentsMargins(0, 0, 0, 0);
    compositionLayout->addWidget(compositionKind_, 0, Qt::AlignLeft);
    compositionLayout->addWidget(composition_->widget(), 3);
    compositionLayout->addWidget(compositionHistogram_->widget(), 2);
    pages_->addWidget(compositionPage);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addLayout(tokens);
    layout->addLayout(corruptedRow);
    layout->addWidget(changes_);
    layout->addWidget(progress_);
    layout->addWidget(edited_);
    layout->addWidget(status_);
    layout->addWidget(pages_, 1);

    connect(mode_, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        workbench_->setMode(kModes[index]);
        commit();
        showSettings();
        showResult();
    });
    connect(compositionKind_, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        workbench_->setComposition(compositionKind_->itemData(index).toString().front().toLatin1());
        commit();
        showComposition();
    });
    connect(lensMeasure_, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index < 0) return;
        workbench_->setLensLogitDifference(index == 1);
        commit();
        showLens();
    });
    connect(position_, &QSpinBox::valueChanged, this, [this](int position) {
        workbench_->setPosition(position);
        commit();
    });
    connect(corrupted_, &QLineEdit::textChanged, this, [this](const QString& text) {
        workbench_->setCorrupted(text);
        showChanges();
    });
    connect(target_, &QLineEdit::textChanged, this, [this](const QString& text) {
        workbench_->setTarget(text);
        showTokenOf(target_, targetToken_, "answer");
    });
    connect(foil_, &QLineEdit::textChanged, this, [this](const QString& text) {
        workbench_->setFoil(text);
        showTokenOf(foil_, foilToken_, "foil");
    });
    for (QLineEdit* field : {corrupted_, target_, foil_})
        connect(field, &QLineEdit::editingFinished, this, &WorkbenchPanel::commit);
    connect(run_, &QPushButton::clicked, this, [this] {
        commit();
        status_->setText(tr("Running…"));
        progress_->setValue(0);
        workbench_->run();
        cancel_->setEnabled(workbench_->isRunning());
    });
    connect(corrupted_, &QLineEdit::returnPressed, run_, &QPushButton::click);
    connect(cancel_, &QPushButton::clicked, workbench_, &document::WorkbenchSession::cancel);
    connect(workbench_, &document::WorkbenchSession::progress, this,
            [this](double done) { progress_->setValue(static_cast<int>(done * 1000)); });
    connect(workbench_, &document::WorkbenchSession::problem, this, [this](const QString& why) {
        cancel_->setEnabled(false);
        status_->setText(why);
    });
    connect(workbench_, &document::WorkbenchSession::finished, this, [this] {
        cancel_->setEnabled(false);
        progress_->setValue(1000);
        showResult();
    });
    // An undo of how a result is drawn (the lens curve, which composition) draws it again.
    connect(workbench_, &document::WorkbenchSession::settingsChanged, this, [this] {
        showSettings();
        showResult();
    });
    connect(session_, &document::ModelSession::inputChanged, this, [this] {
        showChanges();
        position_->setMaximum(std::max<int>(0, static_cast<int>(session_->ids().size()) - 1));
    });
    connect(session_, &document::ModelSession::resultsChanged, this,
            [this] { showEditedNote(workbench_->editedModelNote()); });
    const auto openDetail = [this](int layer, int head) { showHeadPatterns(layer, head); };
    connect(heads_, &plot::EffectMap::cellClicked, this, openDetail);
    connect(pattern_, &plot::EffectMap::cellClicked, this, openDetail);
    connect(openHead_, &QPushButton::clicked, this, [this] {
        if (detailLayer_ < 0) return;
        session_->openHead(detailLayer_, detailHead_);
        emit explorerRequested();
    });
    showSettings();
}

void WorkbenchPanel::applySettings(const document::WorkbenchSettings& settings) {
    workbench_->setSettings(settings);
    showSettings();
    run_->click();
}

void WorkbenchPanel::runComposition(char kind) {
    workbench_->setMode(WorkbenchMode::Composition);
    workbench_->setComposition(kind);
    showSettings();
    run_->click();
}

QString WorkbenchPanel::statusText() const {
    return status_->text();
}

QString WorkbenchPanel::editedText() const {
    return edited_->isHidden() ? QString() : edited_->text();
}

QStringList WorkbenchPanel::predictionChoices() const {
    QStringList choices;
    for (const model::Prediction& p : session_->analysis().predictions)
        choices << QStringLiteral("#%1").arg(p.token);
    return choices;
}

QStringList WorkbenchPanel::tokenLabels(const std::vector<long long>& ids) const {
    QStringList labels;
    for (long long id : ids)
        labels << session_->tokenLabel(id);
    return labels;
}

void WorkbenchPanel::commit() {
    workbench_->commitSettings(tr("Workbench settings"));
}

void WorkbenchPanel::showSettings() {
    const document::WorkbenchSettings& s = workbench_->settings();
    {
        const QSignalBlocker blockers[] = {QSignalBlocker(mode_), QSignalBlocker(position_),
                                           QSignalBlocker(compositionKind_),
                                           QSignalBlocker(lensMeasure_)};
        mode_->setCurrentIndex(static_cast<int>(
            std::find(std::begin(kModes), std::end(kModes), s.mode) - std::begin(kModes)));
        position_->setValue(s.position);
        compositionKind_->setCurrentIndex(
            compositionKind_->findData(QString(QLatin1Char(s.composition))));
        lensMeasure_->setCurrentIndex(s.lensLogitDifference ? 1 : 0);
    }
    // Texts set with their signals: the session already holds them, and the labels follow.
    if (corrupted_->text() != s.corrupted) corrupted_->setText(s.corrupted);
    if (target_->text() != s.target) target_->setText(s.target);
    if (foil_->text() != s.foil) foil_->setText(s.foil);
    const bool patching = s.mode == WorkbenchMode::Patching;
    corruptedLabel_->setVisible(patching);
    corrupted_->setVisible(patching);
    changes_->setVisible(patching);
    const bool tokens = s.mode != WorkbenchMode::Composition;
    for (QWidget* w : std::initializer_list<QWidget*>{target_, foil_, pickTarget_, pickFoil_,
                                                      targetToken_, foilToken_, position_})
        w->setEnabled(tokens);
    pages_->setCurrentIndex(mode_->currentIndex());
}

void WorkbenchPanel::showTokenOf(QLineEdit* field, QLabel* label, const char* what) {
    if (field->text().trimmed().isEmpty() || !session_->model()) {
        label->clear();
        return;
    }
    QString problem;
    const long long id = workbench_->tokenId(field->text(), what, &problem);
    label->setText(id >= 0 ? QStringLiteral("= %1").arg(session_->tokenLabel(id))
                           : tr("<span style='color:#b00'>not one token</span>"));
    label->setToolTip(problem);
}

void WorkbenchPanel::showChanges() {
    QString problem;
    const std::vector<long long> corrupt = workbench_->corruptedIds(&problem);
    const std::vector<long long>& clean = session_->ids();
    if (!problem.isEmpty() || corrupt.empty()) {
        changes_->setText(problem);
        return;
    }
    if (corrupt.size() != clean.size()) {
        changes_->setText(tr("<b>%1 tokens against the text's %2</b>: patching needs the same "
                             "length")
                              .arg(corrupt.size())
                              .arg(clean.size()));
        return;
    }
    QStringList changed;
    for (int t : workbench_->changedPositions())
        changed
            << tr("%1: %2 → <b>%3</b>")
                   .arg(t)
                   .arg(session_->tokenLabel(clean[static_cast<std::size_t>(t)]).toHtmlEscaped(),
                        session_->tokenLabel(corrupt[static_cast<std::size_t>(t)]).toHtmlEscaped());
    changes_->setText(changed.isEmpty() ? tr("The same tokens as the text: change some")
                                        : tr("Changed: ") + changed.join(QStringLiteral(", ")));
}

void WorkbenchPanel::showEditedNote(const QString& note) {
    edited_->setText(note);
    edited_->setVisible(!note.isEmpty());
}

void WorkbenchPanel::showResult() {
    const auto& result = workbench_->lastResult();
    showEditedNote(result ? result->edited : workbench_->editedModelNote());
    if (!result || result->mode != workbench_->settings().mode) return;
    switch (result->mode) {
        case WorkbenchMode::Patching:
            showPatching();
            break;
        case WorkbenchMode::Lens:
            showLens();
            break;
        case WorkbenchMode::Attribution:
            showAttribution();
            break;
        case WorkbenchMode::Composition:
            showComposition();
            break;
    }
}

void WorkbenchPanel::showPatching() {
    const auto& result = workbench_->lastResult();
    if (!result || !result->patching) return;
    const model::PatchingResult& r = *result->patching;
    const QStringList layers = layerLabels(static_cast<int>(r.heads.size()));
    const QStringList heads = headLabels(r.heads.empty() ? 0 : static_cast<int>(r.heads[0].size()));
    heads_->setValues(r.heads, layers, heads);
    pattern_->setValues(r.pattern, layers, heads);
    residual_->setValues(r.residual, layers, tokenLabels(result->cleanIds));
    heads_->setAxisNames(tr("head"), tr("layer"));
    pattern_->setAxisNames(tr("head"), tr("layer"));
    residual_->setAxisNames(tr("position"), tr("layer"));
    const QString metric =
        r.foil >= 0 ? tr("logit(%1) − logit(%2)")
                          .arg(session_->tokenLabel(r.target), session_->tokenLabel(r.foil))
                    : tr("logit(%1)").arg(session_->tokenLabel(r.target));
    status_->setText(tr("Metric %1 at position %2: clean %3, corrupted %4. Each cell: (patched − "
                        "corrupted) / (clean − corrupted). Click a head to see its patterns.")
                         .arg(metric)
                         .arg(r.position)
                         .arg(number(r.cleanMetric), number(r.corruptMetric)));
    // The head clicked last, else the head whose output restores the most.
    if (detailLayer_ < 0 || detailLayer_ >= static_cast<int>(r.heads.size())) {
        detailLayer_ = detailHead_ = 0;
        for (std::size_t l = 0; l < r.heads.size(); ++l)
            for (std::size_t h = 0; h < r.heads[l].size(); ++h)
                if (std::abs(r.heads[l][h]) >
                    std::abs(r.heads[static_cast<std::size_t>(detailLayer_)]
                                    [static_cast<std::size_t>(detailHead_)])) {
                    detailLayer_ = static_cast<int>(l);
                    detailHead_ = static_cast<int>(h);
                }
    }
    showHeadPatterns(detailLayer_, detailHead_);
}

void WorkbenchPanel::showHeadPatterns(int layer, int head) {
    const auto& result = workbench_->lastResult();
    if (!result || !result->cleanRun || !result->corruptRun) return;
    const auto& clean = *result->cleanRun;
    if (layer < 0 || layer >= static_cast<int>(clean.layers.size()) || head < 0 ||
        head >= clean.config.heads)
        return;
    detailLayer_ = layer;
    detailHead_ = head;
    const auto at = static_cast<std::size_t>(layer);
    const auto h = static_cast<std::size_t>(head);
    const QStringList cleanTokens = tokenLabels(result->cleanIds);
    const QStringList corruptTokens = tokenLabels(result->corruptIds);
    cleanPattern_->setTitle(tr("L%1 H%2 clean").arg(layer).arg(head));
    corruptPattern_->setTitle(tr("corrupted"));
    cleanPattern_->setValues(rowsOf(clean.layers[at].weights[h]), cleanTokens, cleanTokens);
    corruptPattern_->setValues(rowsOf(result->corruptRun->layers[at].weights[h]), corruptTokens,
                               corruptTokens);
    openHead_->setEnabled(true);
    openHead_->setText(tr("Open L%1 H%2 in the explorer").arg(layer).arg(head));
}

void WorkbenchPanel::showLens() {
    const auto& result = workbench_->lastResult();
    if (!result || !result->lens) return;
    const model::LensResult& r = *result->lens;
    const int boundaries = static_cast<int>(r.topIds.size());
    std::vector<std::vector<double>> probability;
    std::vector<std::vector<QString>> texts;
    QStringList rows;
    for (int b = 0; b < boundaries; ++b) {
        rows << (b + 1 == boundaries ? tr("out") : tr("L%1 in").arg(b));
        auto& p = probability.emplace_back();
        auto& t = texts.emplace_back();
        for (std::size_t position = 0; position < r.topIds[static_cast<std::size_t>(b)].size();
             ++position) {
            p.push_back(r.topProbabilities[static_cast<std::size_t>(b)][position][0]);
            t.push_back(session_->tokenLabel(r.topIds[static_cast<std::size_t>(b)][position][0]));
        }
    }
    lens_->setValues(probability, rows, tokenLabels(result->cleanIds), texts);
    const auto p = static_cast<std::size_t>(result->position);
    std::vector<std::pair<QString, std::vector<double>>> series;
    // The logit difference reads the result's own targets: the answer, then the foil if any.
    const bool difference = workbench_->settings().lensLogitDifference && !r.targets.empty();
    if (difference) {
        std::vector<double> line;
        for (int b = 0; b < boundaries; ++b) {
            const auto& logits = r.targetLogits[static_cast<std::size_t>(b)][p];
            line.push_back(logits.size() > 1 ? logits[0] - logits[1] : logits[0]);
        }
        const QString answer = session_->tokenLabel(r.targets[0]);
        series.emplace_back(
            r.targets.size() > 1
                ? tr("logit(%1) − logit(%2)").arg(answer, session_->tokenLabel(r.targets[1]))
                : tr("logit(%1)").arg(answer),
            line);
    }
    for (std::size_t k = 0; !difference && k < r.targets.size(); ++k) {
        std::vector<double> line;
        for (int b = 0; b < boundaries; ++b)
            line.push_back(r.targetProbabilities[static_cast<std::size_t>(b)][p][k]);
        series.emplace_back(tr("P(%1)").arg(session_->tokenLabel(r.targets[k])), line);
    }
    if (series.empty()) {
        std::vector<double> line;
        for (int b = 0; b < boundaries; ++b)
            line.push_back(r.topProbabilities[static_cast<std::size_t>(b)][p][0]);
        series.emplace_back(tr("P(top token)"), line);
    }
    lensCurve_->setLines(tr("At position %1 (%2), across the layers")
                             .arg(result->position)
                             .arg(session_->tokenLabel(result->cleanIds[p])),
                         rows,
                         difference ? (r.targets.size() > 1 ? tr("logit difference") : tr("logit"))
                                    : tr("probability"),
                         series);
    status_->setText(
        tr("Each row applies the final norm and the unembedding to the residual "
           "stream entering that layer; the last row is the model's own output. "
           "Colour: the top token's probability."));
}

void WorkbenchPanel::showAttribution() {
    const auto& result = workbench_->lastResult();
    if (!result || !result->attribution) return;
    const model::AttributionResult& r = *result->attribution;
    const int layers = static_cast<int>(r.heads.size());
    attribution_->setValues(r.heads, layerLabels(layers),
                            headLabels(layers ? static_cast<int>(r.heads[0].size()) : 0));
    attribution_->setAxisNames(tr("head"), tr("layer"));
    double heads = 0, biases = 0, mlps = 0;
    for (const auto& row : r.heads)
        for (double v : row)
            heads += v;
    for (double v : r.attentionBias)
        biases += v;
    for (double v : r.mlp)
        mlps += v;
    attributionBars_->setBars(
        tr("Parts and their sum"),
        {tr("embed"), tr("heads"), tr("attn biases"), tr("MLPs"), tr("final-norm bias"), tr("sum"),
         tr("logit diff")},
        {r.embed, heads, biases, mlps, r.finalNormBias, r.sum, r.logitDifference}, tr("logits"),
        {5, 6});
    const QString metric =
        r.foil >= 0 ? tr("logit(%1) − logit(%2)")
                          .arg(session_->tokenLabel(r.target), session_->tokenLabel(r.foil))
                    : tr("logit(%1)").arg(session_->tokenLabel(r.target));
    status_->setText(tr("%1 at position %2 = %3; the parts sum to %4 (difference %5). Every "
                        "norm's scale is frozen at its value in this run.")
                         .arg(metric)
                         .arg(r.position)
                         .arg(number(r.logitDifference), number(r.sum),
                              QString::number(r.sum - r.logitDifference, 'g', 2)));
}

void WorkbenchPanel::showComposition() {
    const auto& result = workbench_->lastResult();
    if (!result || !result->composition) return;
    const model::CompositionResult& r = *result->composition;
    const char which = workbench_->settings().composition;
    const MatrixD& scores = which == 'q' ? r.q : which == 'v' ? r.v : r.k;
    const int N = static_cast<int>(scores.rows());
    const int H = session_->model() ? session_->model()->config.heads : 1;
    QStringList labels;
    for (int i = 0; i < N; ++i)
        labels << QStringLiteral("L%1H%2").arg(i / H).arg(i % H);
    composition_->setTitle(
        tr("%1-composition (earlier head ↓, later →)").arg(QChar(QLatin1Char(which)).toUpper()));
    composition_->setValues(scores, labels, labels);
    // The scores of head pairs in different layers, against what random weights give.
    std::vector<double> pairs;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j)
            if (i / H < j / H) pairs.push_back(scores(i, j));
    const double top = std::max(pairs.empty() ? 0.0 : *std::max_element(pairs.begin(), pairs.end()),
                                result->compositionBaseline * 1.5);
    const int bins = 20;
    const double width = top > 0 ? top / bins : 1.0;
    std::vector<double> counts(bins, 0.0);
    for (double s : pairs)
        counts[static_cast<std::size_t>(std::clamp(static_cast<int>(s / width), 0, bins - 1))] += 1;
    QStringList centres;
    for (int b = 0; b < bins; ++b)
        centres << QString::number((b + 0.5) * width, 'f', 2);
    compositionHistogram_->setBars(tr("Head pairs by score"), centres, counts, tr("pairs"));
    compositionHistogram_->markVertical(
        result->compositionBaseline / width - 0.5,
        tr("random weights %1").arg(number(result->compositionBaseline)));
    int maxI = 0, maxJ = 0;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j)
            if (scores(i, j) > scores(maxI, maxJ)) {
                maxI = i;
                maxJ = j;
            }
    status_->setText(tr("Largest: %1 → %2, %3 (random weights: %4). Scores read the weights "
                        "alone, as TransformerLens folds them.")
                         .arg(labels.value(maxI), labels.value(maxJ), number(scores(maxI, maxJ)),
                              number(result->compositionBaseline)));
}

}  // namespace ae::ui
