#include "ui/editors/scene_editor.h"

#include <QLabel>

#include "document/attention_document.h"

namespace ae::ui {

SceneEditor::SceneEditor(document::AttentionDocument* document, QWidget* parent)
    : QWidget(parent), document_(document), messageLabel_(new QLabel(this)) {
    messageLabel_->setObjectName(QStringLiteral("messageLabel"));
    messageLabel_->setWordWrap(true);
    messageLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    messageLabel_->setStyleSheet(
        QStringLiteral("QLabel { background: #fff4ce; color: #3b2f00; border: 1px solid #d8b94a; "
                       "padding: 4px; }"));
    messageLabel_->hide();
    // A value refused by a background compute is taken back after the edit returned.
    connect(document_, &document::AttentionDocument::editRefused, this, &SceneEditor::showMessage);
}

QString SceneEditor::message() const {
    return messageLabel_->text();
}

void SceneEditor::showMessage(const QString& message) {
    messageLabel_->setText(message);
    messageLabel_->setVisible(!message.isEmpty());
    if (!message.isEmpty()) emit messageRequested(message);
}

void SceneEditor::clearMessage() {
    messageLabel_->clear();
    messageLabel_->hide();
}

bool SceneEditor::commit(const Scene& scene, const QString& description) {
    QString error;
    if (!document_->replaceScene(scene, description, &error)) {
        showMessage(tr("%1 refused: %2").arg(description, error));
        refresh();  // the controls still show the refused value
        return false;
    }
    clearMessage();
    return true;
}

}  // namespace ae::ui
