#pragma once
// File › Examples: the built-in scenes worth showing a class, each with a line on what to notice,
// then one entry per built-in model (io/model/builtin_models.h) with its about.json's title and
// note. Non-modal, so it can stay open beside the window while a teacher picks the next scene; it
// is also what a new user sees on the very first start (see runExplorerWindow).

#include <QDialog>
#include <QList>
#include <QString>

class QLabel;
class QListWidget;

namespace ae::ui {

struct GalleryExample {
    QString preset;     // a name io::loadPreset knows (empty for a model)
    QString heading;    // what the list shows
    QString notice;     // what to look at once it is open
    QString model;      // builtin:NAME for a built-in model, else empty
    QString workbench;  // a workbench preset's name (document/workbench_presets.h), else empty
};

// Every preset example, in the order a lesson would use them.
const QList<GalleryExample>& galleryExamples();
// One entry per built-in model found now, by name.
QList<GalleryExample> builtInModelExamples();
// The workbench's experiments (document/workbench_presets.h) whose model can be had: a built-in
// one found now, or the user's own (the window looks for it when it is picked).
QList<GalleryExample> workbenchExamples();

class ExamplesGallery : public QDialog {
    Q_OBJECT
public:
    explicit ExamplesGallery(QWidget* parent = nullptr);

    QListWidget* list() const { return list_; }
    // What the list shows, row by row: the presets, the built-in models, the workbench's.
    const QList<GalleryExample>& entries() const { return entries_; }
    // Opens the selected example (as double-click or the Open button do).
    void openSelected();

signals:
    void presetRequested(const QString& preset);
    // A built-in model picked: `location` is builtin:NAME, for ModelSession::open.
    void modelRequested(const QString& location);
    // A workbench experiment picked: its preset's name.
    void workbenchPresetRequested(const QString& name);

private:
    void showNotice(int row);

    QList<GalleryExample> entries_;
    QListWidget* list_;
    QLabel* notice_;
};

}  // namespace ae::ui
