#pragma once
// What the token and weight editors share: the document they edit, the message line under their
// tables, and handing a structural change to the document as one undo step.

#include <QWidget>

#include "core/scene.h"

class QLabel;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::ui {

class SceneEditor : public QWidget {
    Q_OBJECT
public:
    SceneEditor(document::AttentionDocument* document, QWidget* parent);

    // The message under the tables (empty when none is shown).
    QString message() const;

signals:
    // Why an edit was refused, or what an edit also changed; shown under the tables too.
    void messageRequested(const QString& message);

protected:
    // Brings every control back to the document's scene.
    virtual void refresh() = 0;
    void showMessage(const QString& message);
    void clearMessage();
    // Hands `scene` to the document as one undo step; shows the reason and resyncs the controls if
    // the document refuses it.
    bool commit(const Scene& scene, const QString& description);
    QLabel* messageLabel() const { return messageLabel_; }

    document::AttentionDocument* const document_;

private:
    QLabel* messageLabel_;
};

}  // namespace ae::ui
