#pragma once
// The input of an encoder–decoder model (document/translation_session.h): the source text, run as
// you type; the target, typed and run teacher forced when you press Enter, or made by Translate
// token by token (each token shows as it comes, Cancel keeps what is made so far); what the
// session is doing after its progress delay, and its last problem.

#include <QWidget>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace ae::document {
class TranslationSession;
}

namespace ae::ui {

class TranslationPanel : public QWidget {
    Q_OBJECT
public:
    explicit TranslationPanel(document::TranslationSession* session, QWidget* parent = nullptr);

    QLineEdit* sourceField() const { return source_; }
    QLineEdit* targetField() const { return target_; }
    QPushButton* translateButton() const { return translate_; }
    QPushButton* cancelButton() const { return cancel_; }
    // The decoder's tokens as the panel shows them (during Translate: those made so far).
    QString tokensText() const;
    QString problemText() const;

private:
    void showModel();
    void showInput();
    void showTokens(const std::vector<long long>& decoderIds);
    void commitTarget();

    document::TranslationSession* session_;
    QLabel* title_;
    QLineEdit* source_;
    QLineEdit* target_;
    QPushButton* translate_;
    QPushButton* cancel_;
    QLabel* tokens_;
    QLabel* problem_;
    QProgressBar* progress_;
};

}  // namespace ae::ui
