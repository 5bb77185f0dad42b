#pragma once
// The input of a whole model (issue 16): which model is open, the sentence (tokenized as the
// user types), its tokens as chips with their ids, the ids themselves for typing, and padding
// marks for BERT (click a chip). Shows what the session is doing after its progress delay, with
// Cancel, and its last problem. Everything goes through the ModelSession.

#include <QWidget>

class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QProgressBar;
class QPushButton;

namespace ae::document {
class ModelSession;
}  // namespace ae::document

namespace ae::ui {

class ModelPanel : public QWidget {
    Q_OBJECT
public:
    explicit ModelPanel(document::ModelSession* session, QWidget* parent = nullptr);

    QLineEdit* textField() const { return text_; }
    QLineEdit* textPairField() const { return second_; }
    QLineEdit* idsField() const { return ids_; }
    QListWidget* chips() const { return chips_; }
    // The shown problem (a refused input), or empty.
    QString problemText() const;

    // "7 41 3" or "7, 41, 3" → ids; false with *error naming the first bad entry.
    static bool parseIds(const QString& text, std::vector<long long>* ids, QString* error);

private:
    void showModel();
    void showInput();
    void chipClicked(QListWidgetItem* item);
    void fitChips();
    void showProblem(const QString& message);
    void clearProblem();
    // The dock as high as the panel needs at its width.
    void fitDockHeight();

    document::ModelSession* session_;
    QLabel* title_;
    QLineEdit* text_;
    QLineEdit* second_;
    QLabel* secondLabel_;
    QListWidget* chips_;
    QLineEdit* ids_;
    QLabel* hint_;
    QLabel* problem_;
    QProgressBar* progress_;
    QPushButton* cancel_;
};

}  // namespace ae::ui
