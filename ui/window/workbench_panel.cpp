#include "ui/window/workbench_panel.h"

#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "document/model_session.h"
#include "document/workbench_session.h"
#include "plot/effect_map.h"

namespace ae::ui {

WorkbenchPanel::WorkbenchPanel(document::ModelSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      workbench_(new document::WorkbenchSession(session, this)) {
    setObjectName(QStringLiteral("workbench"));
    corrupted_ = new QLineEdit(this);
    corrupted_->setObjectName(QStringLiteral("corruptedPrompt"));
    corrupted_->setPlaceholderText(
        tr("The model's text with a few tokens changed (ids without a tokenizer)"));
    target_ = new QLineEdit(this);
    target_->setObjectName(QStringLiteral("patchTarget"));
    target_->setPlaceholderText(tr("a token, or #id"));
    foil_ = new QLineEdit(this);
    foil_->setObjectName(QStringLiteral("patchFoil"));
    foil_->setPlaceholderText(tr("optional: the metric is answer − foil"));
    run_ = new QPushButton(tr("Run patching"), this);
    run_->setObjectName(QStringLiteral("runPatching"));
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setEnabled(false);
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

    auto* form = new QFormLayout;
    form->addRow(tr("Corrupted prompt"), corrupted_);
    auto* tokens = new QHBoxLayout;
    tokens->addWidget(new QLabel(tr("Answer"), this));
    tokens->addWidget(target_);
    tokens->addWidget(new QLabel(tr("Foil"), this));
    tokens->addWidget(foil_);
    tokens->addWidget(run_);
    tokens->addWidget(cancel_);
    form->addRow(tokens);
    form->addRow(changes_);

    heads_ = new plot::EffectMap(tr("Head outputs (layer × head)"), this);
    pattern_ = new plot::EffectMap(tr("Patterns only (layer × head)"), this);
    residual_ = new plot::EffectMap(tr("Residual stream (layer × position)"), this);
    heads_->widget()->setObjectName(QStringLiteral("headsEffectMap"));
    pattern_->widget()->setObjectName(QStringLiteral("patternEffectMap"));
    residual_->widget()->setObjectName(QStringLiteral("residualEffectMap"));
    // Small minimums: the tab must fit beside the docks of a 1024 x 768 window.
    for (plot::EffectMap* map : {heads_, pattern_, residual_})
        map->widget()->setMinimumSize(180, 140);
    target_->setMinimumWidth(60);
    foil_->setMinimumWidth(60);
    auto* maps = new QGridLayout;
    maps->addWidget(heads_->widget(), 0, 0);
    maps->addWidget(pattern_->widget(), 0, 1);
    maps->addWidget(residual_->widget(), 1, 0, 1, 2);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(progress_);
    layout->addWidget(status_);
    layout->addLayout(maps, 1);

    connect(corrupted_, &QLineEdit::textChanged, this, [this](const QString& text) {
        workbench_->setCorrupted(text);
        showChanges();
    });
    connect(target_, &QLineEdit::textChanged, workbench_, &document::WorkbenchSession::setTarget);
    connect(foil_, &QLineEdit::textChanged, workbench_, &document::WorkbenchSession::setFoil);
    connect(run_, &QPushButton::clicked, this, [this] {
        status_->setText(tr("Patching every head, pattern and residual row…"));
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
        showResult();
    });
    showChanges();
}

QString WorkbenchPanel::statusText() const {
    return status_->text();
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

void WorkbenchPanel::showResult() {
    const auto& result = workbench_->result();
    if (!result) {
        status_->setText(tr("Cancelled"));
        return;
    }
    const model::PatchingResult& r = *result;
    QStringList layers, heads, positions;
    for (std::size_t l = 0; l < r.heads.size(); ++l)
        layers << tr("L%1").arg(l);
    for (std::size_t h = 0; h < (r.heads.empty() ? 0 : r.heads.front().size()); ++h)
        heads << tr("H%1").arg(h);
    for (long long id : workbench_->cleanIds())
        positions << session_->tokenLabel(id);
    heads_->setValues(r.heads, layers, heads);
    pattern_->setValues(r.pattern, layers, heads);
    residual_->setValues(r.residual, layers, positions);
    progress_->setValue(1000);
    const QString metric =
        r.foil >= 0 ? tr("logit(%1) − logit(%2)")
                          .arg(session_->tokenLabel(r.target), session_->tokenLabel(r.foil))
                    : tr("logit(%1)").arg(session_->tokenLabel(r.target));
    status_->setText(tr("Metric %1 at position %2: clean %3, corrupted %4. Each cell: (patched − "
                        "corrupted) / (clean − corrupted).")
                         .arg(metric)
                         .arg(r.position)
                         .arg(r.cleanMetric, 0, 'g', 4)
                         .arg(r.corruptMetric, 0, 'g', 4));
}

}  // namespace ae::ui
