#pragma once
// File › Examples: the built-in scenes worth showing a class, each with a line on what to notice.
// Non-modal, so it can stay open beside the window while a teacher picks the next scene; it is
// also what a new user sees on the very first start (see runExplorerWindow).

#include <QDialog>
#include <QList>
#include <QString>

class QLabel;
class QListWidget;

namespace ae::ui {

struct GalleryExample {
    QString preset;   // a name io::loadPreset knows
    QString heading;  // what the list shows
    QString notice;   // what to look at once it is open
};

// Every example, in the order a lesson would use them.
const QList<GalleryExample>& galleryExamples();

class ExamplesGallery : public QDialog {
    Q_OBJECT
public:
    explicit ExamplesGallery(QWidget* parent = nullptr);

    QListWidget* list() const { return list_; }
    // Opens the selected example (as double-click or the Open button do).
    void openSelected();

signals:
    void presetRequested(const QString& preset);

private:
    void showNotice(int row);

    QListWidget* list_;
    QLabel* notice_;
};

}  // namespace ae::ui
