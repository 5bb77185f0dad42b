#pragma once
// The window's maps follow its document: a HeatmapGrid (plot/, which knows no document) is handed
// each new result, error and computing state, and its mask clicks become undoable mask edits.

#include <QObject>

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::plot {
class HeatmapGrid;
}  // namespace ae::plot

namespace ae::ui {

class DocumentMaps : public QObject {
    Q_OBJECT
public:
    // Binds `grid` to `document` for the grid's lifetime (the binding is the grid's child), and
    // shows the document's results at once when it already has some (an export's private grid).
    DocumentMaps(document::AttentionDocument* document, plot::HeatmapGrid* grid);

signals:
    void statusMessage(const QString& text);

private:
    void showResults();
    // Hides or shows one query-key pair through the custom mask, as an undoable edit; pairs the
    // causal, window or padding mask hides stay hidden, with the reason in the status line.
    void toggleMaskCell(int query, int key);

    document::AttentionDocument* document_;
    plot::HeatmapGrid* grid_;
};

}  // namespace ae::ui
