#include "ui/window/translation_panel.h"

#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "document/translation_session.h"

namespace ae::ui {

TranslationPanel::TranslationPanel(document::TranslationSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      title_(new QLabel),
      source_(new QLineEdit),
      target_(new QLineEdit),
      translate_(new QPushButton(tr("Translate"))),
      cancel_(new QPushButton(tr("Cancel"))),
      tokens_(new QLabel),
      problem_(new QLabel),
      progress_(new QProgressBar) {
    title_->setObjectName(QStringLiteral("translationTitle"));
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    source_->setObjectName(QStringLiteral("translationSource"));
    source_->setClearButtonEnabled(true);
    source_->setToolTip(tr("The source text: tokenized and run as you type"));
    target_->setObjectName(QStringLiteral("translationTarget"));
    target_->setClearButtonEnabled(true);
    target_->setPlaceholderText(tr("Type a target and press Enter, or Translate"));
    target_->setToolTip(
        tr("The target the decoder reads (teacher forcing): Enter runs it; "
           "Translate makes one greedily, token by token"));
    translate_->setObjectName(QStringLiteral("translateButton"));
    translate_->setToolTip(tr("Greedy decoding: each next token the most probable one"));
    cancel_->setObjectName(QStringLiteral("translationCancel"));
    cancel_->setEnabled(false);
    tokens_->setObjectName(QStringLiteral("translationTokens"));
    tokens_->setWordWrap(true);
    tokens_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    problem_->setObjectName(QStringLiteral("translationProblem"));
    problem_->setWordWrap(true);
    problem_->setStyleSheet(QStringLiteral("color: #b00020"));
    problem_->hide();
    progress_->setRange(0, 0);
    progress_->setMaximumHeight(12);
    progress_->setTextVisible(false);
    progress_->hide();

    auto* fields = new QGridLayout;
    auto* sourceLabel = new QLabel(tr("&Source"));
    sourceLabel->setBuddy(source_);
    auto* targetLabel = new QLabel(tr("&Target"));
    targetLabel->setBuddy(target_);
    fields->addWidget(sourceLabel, 0, 0);
    fields->addWidget(source_, 0, 1, 1, 3);
    fields->addWidget(targetLabel, 1, 0);
    fields->addWidget(target_, 1, 1);
    fields->addWidget(translate_, 1, 2);
    fields->addWidget(cancel_, 1, 3);
    fields->setColumnStretch(1, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->addWidget(title_);
    layout->addLayout(fields);
    layout->addWidget(tokens_);
    layout->addWidget(progress_);
    layout->addWidget(problem_);

    connect(source_, &QLineEdit::textEdited, session_, &document::TranslationSession::setSource);
    connect(target_, &QLineEdit::returnPressed, this, &TranslationPanel::commitTarget);
    connect(translate_, &QPushButton::clicked, session_, &document::TranslationSession::translate);
    connect(cancel_, &QPushButton::clicked, session_, &document::TranslationSession::cancel);
    connect(session_, &document::TranslationSession::opened, this, &TranslationPanel::showModel);
    connect(session_, &document::TranslationSession::inputChanged, this,
            &TranslationPanel::showInput);
    connect(session_, &document::TranslationSession::translationStep, this,
            &TranslationPanel::showTokens);
    connect(session_, &document::TranslationSession::busyChanged, this, [this](bool busy) {
        cancel_->setEnabled(busy);
        if (!busy) progress_->hide();
    });
    connect(session_, &document::TranslationSession::progressShown, this,
            [this] { progress_->show(); });
    connect(session_, &document::TranslationSession::problem, this, [this](const QString& text) {
        problem_->setText(text);
        problem_->setVisible(!text.isEmpty());
    });
    connect(session_, &document::TranslationSession::resultsChanged, this, [this] {
        if (session_->problemText().isEmpty()) problem_->hide();
    });
}

QString TranslationPanel::tokensText() const {
    return tokens_->text();
}

QString TranslationPanel::problemText() const {
    return problem_->isVisible() ? problem_->text() : QString();
}

void TranslationPanel::showModel() {
    const model::Model* m = session_->model();
    if (!m) return;
    title_->setText(tr("%1 (%2): %3 + %4 layers, %5 heads")
                        .arg(QFileInfo(session_->folder()).fileName(),
                             QString::fromLatin1(model::familyName(m->config.family)))
                        .arg(m->config.layers)
                        .arg(m->decoder->config.layers)
                        .arg(m->decoder->config.heads));
    title_->setToolTip(session_->folder());
    problem_->hide();
}

void TranslationPanel::showInput() {
    if (source_->text() != session_->source()) source_->setText(session_->source());
    // A translation fills the target field: editing it and pressing Enter forces another.
    const QString target =
        session_->translated() ? session_->translationText() : session_->target();
    if (!target_->hasFocus() && target_->text() != target) target_->setText(target);
    showTokens(session_->decoderIds());
}

void TranslationPanel::showTokens(const std::vector<long long>& decoderIds) {
    QStringList labels;
    for (long long id : decoderIds)
        labels << session_->targetTokenText(id);
    tokens_->setText(labels.isEmpty()
                         ? QString()
                         : tr("Decoder input: %1").arg(labels.join(QStringLiteral(" · "))));
}

void TranslationPanel::commitTarget() {
    const QString text = target_->text();
    if (session_->translated() && text == session_->translationText()) return;
    if (!session_->translated() && text == session_->target()) return;
    session_->setTarget(text);
}

}  // namespace ae::ui
