#include "ui/editors/weights_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <cmath>
#include <limits>

#include "core/scene_edit.h"
#include "ui/editors/matrix_table.h"

namespace ae::ui {
namespace {

bool sameDraw(const InitSpec& a, const InitSpec& b) {
    return a.seed == b.seed && a.distribution == b.distribution && a.std == b.std &&
           a.low == b.low && a.high == b.high;
}

bool sameInit(const std::optional<InitSpec>& a, const std::optional<InitSpec>& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a || (sameDraw(*a, *b) && a->dModel == b->dModel && a->dProj == b->dProj &&
                  a->mode == b->mode && a->output == b->output && a->bias == b->bias);
}

QStringList numberLabels(int count) {
    QStringList labels;
    labels.reserve(count);
    for (int i = 0; i < count; ++i)
        labels << QString::number(i);
    return labels;
}

// "h1 · 4": column (or row) 4 of d_proj, read by head 1. Plain numbers for a single head.
QStringList headLabels(int count, int dHead, int heads) {
    if (heads < 2 || dHead <= 0) return numberLabels(count);
    QStringList labels;
    labels.reserve(count);
    for (int i = 0; i < count; ++i)
        labels << QStringLiteral("h%1 · %2").arg(i / dHead).arg(i);
    return labels;
}

}  // namespace

WeightsEditor::WeightsEditor(document::AttentionDocument* document, QWidget* parent)
    : SceneEditor(document, parent) {
    modeCombo_ = new QComboBox(this);
    modeCombo_->setObjectName(QStringLiteral("projectionModeCombo"));
    modeCombo_->addItem(tr("Separate Q, K, V"), int(ProjectionMode::Separate));
    modeCombo_->addItem(tr("Shared Q = K"), int(ProjectionMode::SharedQK));
    modeCombo_->addItem(tr("Identity Q = K = V = X"), int(ProjectionMode::Identity));
    modeCombo_->setToolTip(
        tr("Switching keeps what it can: shared keeps W_Q, separate copies W_Q into W_K, leaving "
           "identity starts from identity matrices, identity sets d_proj = d_model"));

    dProjSpin_ = new QSpinBox(this);
    dProjSpin_->setObjectName(QStringLiteral("dProjSpin"));
    dProjSpin_->setRange(1, 4096);
    dProjSpin_->setKeyboardTracking(false);
    dProjSpin_->setToolTip(
        tr("Width of Q, K and V. New columns are drawn from the distribution "
           "below; heads drop to a divisor of d_proj if needed."));
    outputCheck_ = new QCheckBox(tr("Output projection W_O"), this);
    outputCheck_->setObjectName(QStringLiteral("outputCheck"));
    outputCheck_->setToolTip(tr("Adds W_O (d_proj x d_model), drawn from the distribution below"));

    distributionCombo_ = new QComboBox(this);
    distributionCombo_->setObjectName(QStringLiteral("distributionCombo"));
    distributionCombo_->addItem(tr("Normal"), int(InitDistribution::Normal));
    distributionCombo_->addItem(tr("Uniform"), int(InitDistribution::Uniform));
    distributionCombo_->addItem(tr("Integers"), int(InitDistribution::Integers));
    stdSpin_ = new QDoubleSpinBox(this);
    stdSpin_->setObjectName(QStringLiteral("stdSpin"));
    stdSpin_->setRange(0.001, 1000.0);
    stdSpin_->setDecimals(3);
    stdSpin_->setValue(1.0);
    lowSpin_ = new QDoubleSpinBox(this);
    lowSpin_->setObjectName(QStringLiteral("lowSpin"));
    lowSpin_->setRange(-1e6, 1e6);
    lowSpin_->setValue(-1.0);
    highSpin_ = new QDoubleSpinBox(this);
    highSpin_->setObjectName(QStringLiteral("highSpin"));
    highSpin_->setRange(-1e6, 1e6);
    highSpin_->setValue(1.0);
    highSpin_->setToolTip(tr("Uniform draws in [low, high); integers draw low .. high - 1"));
    seedSpin_ = new QSpinBox(this);
    seedSpin_->setObjectName(QStringLiteral("weightSeedSpin"));
    seedSpin_->setRange(0, std::numeric_limits<int>::max());
    rerollButton_ = new QPushButton(tr("Re-roll"), this);
    rerollButton_->setObjectName(QStringLiteral("rerollButton"));
    rerollButton_->setToolTip(
        tr("Draw every projection from the seed and distribution (keeps the "
           "mode, d_proj, W_O and the bias rows shown)"));

    identityNote_ = new QLabel(this);
    identityNote_->setObjectName(QStringLiteral("identityNote"));
    identityNote_->setWordWrap(true);

    tabs_ = new QTabWidget(this);
    tabs_->setObjectName(QStringLiteral("weightTabs"));
    buildPage(kQueryPage, document::WeightMatrix::Query, document::WeightMatrix::QueryBias,
              QStringLiteral("W_Q"));
    buildPage(kKeyPage, document::WeightMatrix::Key, document::WeightMatrix::KeyBias,
              QStringLiteral("W_K"));
    buildPage(kValuePage, document::WeightMatrix::Value, document::WeightMatrix::ValueBias,
              QStringLiteral("W_V"));
    buildPage(kOutputPage, document::WeightMatrix::Output, document::WeightMatrix::OutputBias,
              QStringLiteral("W_O"));

    // Three short rows rather than two long ones: the editor lives in a dock.
    auto* controls = new QGridLayout;
    controls->addWidget(new QLabel(tr("Mode"), this), 0, 0);
    controls->addWidget(modeCombo_, 0, 1, 1, 3);
    controls->addWidget(new QLabel(tr("d_proj"), this), 0, 4);
    controls->addWidget(dProjSpin_, 0, 5);
    controls->addWidget(outputCheck_, 0, 6, 1, 2);
    controls->addWidget(new QLabel(tr("Draw"), this), 1, 0);
    controls->addWidget(distributionCombo_, 1, 1);
    controls->addWidget(new QLabel(tr("std"), this), 1, 2);
    controls->addWidget(stdSpin_, 1, 3);
    controls->addWidget(new QLabel(tr("low"), this), 1, 4);
    controls->addWidget(lowSpin_, 1, 5);
    controls->addWidget(new QLabel(tr("high"), this), 1, 6);
    controls->addWidget(highSpin_, 1, 7);
    controls->addWidget(new QLabel(tr("Seed"), this), 2, 0);
    controls->addWidget(seedSpin_, 2, 1);
    controls->addWidget(rerollButton_, 2, 2, 1, 2);
    controls->setColumnStretch(8, 1);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(controls);
    layout->addWidget(identityNote_);
    layout->addWidget(tabs_, 1);
    layout->addWidget(messageLabel());

    connect(modeCombo_, &QComboBox::currentIndexChanged, this, [this] {
        // A copy: after the commit the document holds the new scene.
        const int heads = document_->scene().heads;
        Scene next = document_->scene();
        setProjectionMode(next, static_cast<ProjectionMode>(modeCombo_->currentData().toInt()),
                          drawSpec());
        if (commit(next, tr("Projection mode: %1").arg(modeCombo_->currentText()))) {
            reportHeads(heads, next);
        }
    });
    connect(dProjSpin_, &QSpinBox::valueChanged, this, [this](int dProj) {
        const int heads = document_->scene().heads;
        Scene next = document_->scene();
        setProjectionWidth(next, dProj, drawSpec());
        if (commit(next, tr("Change d_proj to %1").arg(dProj))) reportHeads(heads, next);
    });
    connect(outputCheck_, &QCheckBox::toggled, this, [this](bool on) {
        Scene next = document_->scene();
        setOutputProjection(next, on, drawSpec());
        if (commit(next, on ? tr("Add output projection") : tr("Remove output projection"))) {
            if (on) tabs_->setCurrentIndex(tabs_->indexOf(pages_[kOutputPage].widget));
        }
    });
    connect(distributionCombo_, &QComboBox::currentIndexChanged, this, [this] {
        const auto d = static_cast<InitDistribution>(distributionCombo_->currentData().toInt());
        stdSpin_->setEnabled(d == InitDistribution::Normal);
        lowSpin_->setEnabled(d != InitDistribution::Normal);
        highSpin_->setEnabled(d != InitDistribution::Normal);
        const int decimals = d == InitDistribution::Integers ? 0 : 2;
        lowSpin_->setDecimals(decimals);
        highSpin_->setDecimals(decimals);
    });
    connect(rerollButton_, &QPushButton::clicked, this, &WeightsEditor::reroll);
    connect(document_, &document::AttentionDocument::structureChanged, this,
            &WeightsEditor::refresh);
    connect(document_, &document::AttentionDocument::resultsChanged, this, &WeightsEditor::refresh);
    emit distributionCombo_->currentIndexChanged(distributionCombo_->currentIndex());
    refresh();
}

void WeightsEditor::buildPage(PageIndex index, document::WeightMatrix matrix,
                              document::WeightMatrix bias, const QString& name) {
    Page& page = pages_[index];
    page.matrix = matrix;
    page.bias = bias;
    page.name = name;
    page.widget = new QWidget(tabs_);
    page.biasCheck = new QCheckBox(tr("Bias row"), page.widget);
    page.biasCheck->setObjectName(name + QStringLiteral("BiasCheck"));
    page.biasCheck->setToolTip(tr("Show and edit the bias added after %1. Turning it off sets "
                                  "the bias to zero.")
                                   .arg(name));
    page.note = new QLabel(page.widget);
    page.note->setWordWrap(true);
    page.note->setObjectName(name + QStringLiteral("Note"));
    page.model = new MatrixTableModel(this);
    page.model->setToolTipPrefix(name);
    page.view = new QTableView(page.widget);
    page.view->setObjectName(name + QStringLiteral("Table"));
    page.view->setModel(page.model);
    page.view->setEditTriggers(QAbstractItemView::DoubleClicked |
                               QAbstractItemView::EditKeyPressed |
                               QAbstractItemView::AnyKeyPressed);
    configureNumberView(page.view, decimals_);
    auto* layout = new QVBoxLayout(page.widget);
    layout->addWidget(page.biasCheck);
    layout->addWidget(page.note);
    layout->addWidget(page.view, 1);
    tabs_->addTab(page.widget, name);

    // The bias is the row after the matrix's rows, when it is shown.
    page.model->setSetter([this, index](int row, int column, double value, QString* error) {
        const Page& p = pages_[index];
        const Scene& scene = document_->scene();
        const MatrixD& m = index == kQueryPage   ? scene.projections.query
                           : index == kKeyPage   ? scene.projections.key
                           : index == kValuePage ? scene.projections.value
                                                 : scene.projections.output;
        if (column >= m.cols() || row > m.rows()) return false;
        if (row == m.rows()) return document_->setWeightValue(p.bias, 0, column, value, error);
        return document_->setWeightValue(p.matrix, row, column, value, error);
    });
    connect(page.model, &MatrixTableModel::messageRequested, this, &WeightsEditor::showMessage);
    connect(page.model, &MatrixTableModel::valueAccepted, this, &WeightsEditor::clearMessage);
    connect(page.biasCheck, &QCheckBox::toggled, this,
            [this, index](bool on) { setBiasShown(index, on); });
}

InitSpec WeightsEditor::drawSpec() const {
    InitSpec spec;
    spec.seed = static_cast<std::uint64_t>(seedSpin_->value());
    spec.distribution = static_cast<InitDistribution>(distributionCombo_->currentData().toInt());
    spec.std = stdSpin_->value();
    spec.low = lowSpin_->value();
    spec.high = highSpin_->value();
    if (spec.distribution == InitDistribution::Integers) {
        // init's integers are whole numbers, so the scene saves as the init that drew it.
        spec.low = std::round(spec.low);
        spec.high = std::round(spec.high);
    }
    return spec;
}

void WeightsEditor::syncDistributionControls(const InitSpec& spec) {
    const QSignalBlocker b(distributionCombo_);
    distributionCombo_->setCurrentIndex(distributionCombo_->findData(int(spec.distribution)));
    seedSpin_->setValue(static_cast<int>(std::min<std::uint64_t>(spec.seed, seedSpin_->maximum())));
    stdSpin_->setValue(spec.std);
    const int decimals = spec.distribution == InitDistribution::Integers ? 0 : 2;
    lowSpin_->setDecimals(decimals);
    highSpin_->setDecimals(decimals);
    lowSpin_->setValue(spec.low);
    highSpin_->setValue(spec.high);
    stdSpin_->setEnabled(spec.distribution == InitDistribution::Normal);
    lowSpin_->setEnabled(spec.distribution != InitDistribution::Normal);
    highSpin_->setEnabled(spec.distribution != InitDistribution::Normal);
}

void WeightsEditor::refresh() {
    const Scene& scene = document_->scene();
    const Projections& p = scene.projections;
    if (!distributionSynced_ || (scene.init && !sameInit(scene.init, seenInit_))) {
        syncDistributionControls(inferredDrawSpec(scene));
        distributionSynced_ = true;
    }
    seenInit_ = scene.init;

    const bool identity = p.mode == ProjectionMode::Identity;
    {
        const QSignalBlocker b1(modeCombo_), b2(dProjSpin_), b3(outputCheck_);
        modeCombo_->setCurrentIndex(modeCombo_->findData(int(p.mode)));
        // Only when different, so text being typed into the spin box survives result changes.
        if (dProjSpin_->value() != scene.dProj()) dProjSpin_->setValue(scene.dProj());
        dProjSpin_->setEnabled(!identity);
        dProjSpin_->setToolTip(identity
                                   ? tr("Identity mode: d_proj = d_model = %1").arg(scene.dModel())
                                   : tr("Width of Q, K and V. New columns are drawn from the "
                                        "distribution below; heads drop to a divisor of "
                                        "d_proj if needed."));
        outputCheck_->setChecked(p.hasOutput);
    }
    identityNote_->setText(
        tr("Q = K = V = X: no projection (identity mode). The inputs themselves are compared, so "
           "d_proj = d_model = %1.")
            .arg(scene.dModel()));
    identityNote_->setVisible(identity);

    tabs_->setTabVisible(kQueryPage, !identity);
    tabs_->setTabVisible(kKeyPage, !identity);
    tabs_->setTabVisible(kValuePage, !identity);
    tabs_->setTabVisible(kOutputPage, p.hasOutput);
    tabs_->setVisible(!identity || p.hasOutput);
    for (int i = 0; i < kPageCount; ++i)
        refreshPage(static_cast<PageIndex>(i));
}

void WeightsEditor::refreshPage(PageIndex index) {
    Page& page = pages_[index];
    const Scene& scene = document_->scene();
    const Projections& p = scene.projections;
    const bool shared = p.mode == ProjectionMode::SharedQK;
    const MatrixD* matrix = nullptr;
    const VectorD* bias = nullptr;
    QString rowName = QStringLiteral("d_model");
    switch (index) {
        case kQueryPage:
            matrix = &p.query, bias = &p.queryBias;
            break;
        case kKeyPage:
            matrix = &p.key, bias = &p.keyBias;
            break;
        case kValuePage:
            matrix = &p.value, bias = &p.valueBias;
            break;
        default:
            matrix = &p.output, bias = &p.outputBias;
            rowName = QStringLiteral("d_proj");
            break;
    }
    const bool usesQuery = index == kKeyPage && shared;
    // A bias that is not zero is always shown: hiding it would hide part of the computation.
    if (bias->size() > 0 && !bias->isZero(0)) page.biasShown = true;
    const bool showBias = page.biasShown && bias->size() == matrix->cols() && !usesQuery;
    {
        const QSignalBlocker blocker(page.biasCheck);
        page.biasCheck->setChecked(page.biasShown);
    }
    page.biasCheck->setVisible(!usesQuery);
    page.note->setToolTip(tr("Rows: %1; columns: %2")
                              .arg(rowName, index == kOutputPage ? tr("d_out") : tr("d_proj")));
    page.view->setVisible(!usesQuery);
    if (usesQuery) {
        page.note->setText(
            tr("W_K uses W_Q (shared Q = K): keys are X·W_Q + b_Q. Edit W_Q, or "
               "switch the mode to separate to give keys their own matrix."));
        page.model->setValues(MatrixD());
        page.modelHasBias = false;
        page.shownRevision = -1;
    } else {
        const QString shape = index == kOutputPage ? tr("%1: d_proj × d_out = %2 × %3")
                                                   : tr("%1: d_model × d_proj = %2 × %3");
        // Which d_proj columns (rows of W_O) each head reads: head h owns d_head of them.
        const int heads = scene.heads;
        const int dHead = heads > 0 ? scene.dProj() / heads : 0;
        QString headText;
        if (heads > 1 && dHead > 0) {
            QStringList spans;
            for (int h = 0; h < heads && h < 4; ++h)
                spans << tr("h%1 = %2–%3").arg(h).arg(h * dHead).arg((h + 1) * dHead - 1);
            if (heads > 4) spans << QStringLiteral("…");
            headText = (index == kOutputPage ? tr("; rows by head: %1 (every other head shaded)")
                                             : tr("; columns by head: %1 (every other head "
                                                  "shaded)"))
                           .arg(spans.join(QStringLiteral(", ")));
        }
        page.note->setText(shape.arg(page.name).arg(matrix->rows()).arg(matrix->cols()) + headText +
                           (showBias ? tr("; the last row is the bias") : QString()));
        const Qt::Orientation headAxis = index == kOutputPage ? Qt::Vertical : Qt::Horizontal;
        page.model->setHeadBands(headAxis, dHead, heads);
        const int rows = static_cast<int>(matrix->rows());
        // Most result changes (a mask, an embedding) leave the weights alone: the revision says
        // so without reading them, else compare in place before building anything. A head count
        // changes only the labels.
        const MatrixD& shown = page.model->values();
        const long revision = document_->scheduler().weightsRevision();
        if (page.shownHeads == heads && page.modelHasBias == showBias &&
            shown.rows() == rows + (showBias ? 1 : 0) && shown.cols() == matrix->cols() &&
            (page.shownRevision == revision ||
             (shown.topRows(rows) == *matrix &&
              (!showBias || shown.row(rows) == bias->transpose())))) {
            page.shownRevision = revision;
            return;
        }
        page.shownRevision = revision;
        MatrixD values(rows + (showBias ? 1 : 0), matrix->cols());
        values.topRows(rows) = *matrix;
        if (showBias) values.row(rows) = bias->transpose();
        const int cols = static_cast<int>(matrix->cols());
        QStringList rowLabels =
            index == kOutputPage ? headLabels(rows, dHead, heads) : numberLabels(rows);
        if (showBias) rowLabels << tr("bias");
        page.model->setValues(
            values, rowLabels,
            index == kOutputPage ? numberLabels(cols) : headLabels(cols, dHead, heads));
        page.modelHasBias = showBias;
        page.shownHeads = heads;
        fitColumnsToLastLabel(page.view);
    }
}

void WeightsEditor::setBiasShown(PageIndex index, bool shown) {
    Page& page = pages_[index];
    const Scene& scene = document_->scene();
    const Projections& p = scene.projections;
    const VectorD& bias = index == kQueryPage   ? p.queryBias
                          : index == kKeyPage   ? p.keyBias
                          : index == kValuePage ? p.valueBias
                                                : p.outputBias;
    if (!shown && bias.size() > 0 && !bias.isZero(0)) {
        Scene next = scene;
        Projections& np = next.projections;
        switch (index) {
            case kQueryPage:
                np.queryBias.setZero();
                if (np.mode == ProjectionMode::SharedQK) np.keyBias.setZero();
                break;
            case kKeyPage:
                np.keyBias.setZero();
                break;
            case kValuePage:
                np.valueBias.setZero();
                break;
            default:
                np.outputBias.setZero();
                break;
        }
        next.init.reset();
        page.biasShown = false;
        if (!commit(next, tr("Remove the bias of %1").arg(page.name))) page.biasShown = true;
        refreshPage(index);
        return;
    }
    page.biasShown = shown;
    refreshPage(index);
}

void WeightsEditor::reroll() {
    const InitSpec spec = drawSpec();
    if (!(spec.high > spec.low)) {
        showMessage(
            tr("Re-roll needs high > low (now low %1, high %2)").arg(spec.low).arg(spec.high));
        return;
    }
    const Scene& scene = document_->scene();
    const bool identity = scene.projections.mode == ProjectionMode::Identity;
    const bool separate = scene.projections.mode == ProjectionMode::Separate;
    bool bias = scene.projections.hasOutput && pages_[kOutputPage].biasShown;
    if (!identity) {
        bias = bias || pages_[kQueryPage].biasShown || pages_[kValuePage].biasShown ||
               (separate && pages_[kKeyPage].biasShown);
    }
    Scene next = scene;
    rerollProjections(next, spec, bias);
    if (bias) {
        for (Page& page : pages_)
            page.biasShown = true;
    }
    commit(next, tr("Re-roll projections (seed %1)").arg(spec.seed));
}

void WeightsEditor::reportHeads(int before, const Scene& after) {
    if (after.heads == before) return;
    showMessage(tr("Heads changed from %1 to %2, which divides d_proj = %3")
                    .arg(before)
                    .arg(after.heads)
                    .arg(after.dProj()));
}

void WeightsEditor::setDecimals(int decimals) {
    decimals_ = decimals;
    for (Page& page : pages_) {
        page.model->setDecimals(decimals);
        configureNumberView(page.view, decimals);
        fitColumnsToLastLabel(page.view);
    }
}

QSize WeightsEditor::sizeHint() const {
    return {560, 420};
}

}  // namespace ae::ui
