#pragma once
// One stream's tokens as a table: the token text, a padding check box when these tokens are the
// keys, then the d_model embedding values. Renaming and padding are undoable document edits;
// values go through setEmbeddingValue, which refuses bad numbers with a reason.

#include <QAbstractTableModel>
#include <string>
#include <vector>

#include "document/attention_document.h"

namespace ae::ui {

class TokenTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    TokenTableModel(document::AttentionDocument* document, Stream stream,
                    QObject* parent = nullptr);

    // Reads the document again: a new shape resets the model, anything else only signals the
    // cells that changed (no reset while the user may be editing a cell).
    void refresh();
    void setDecimals(int decimals);

    Stream stream() const { return stream_; }
    static constexpr int kTextColumn = 0;
    // The padding check box column, or -1 when these tokens are not the keys (the queries of a
    // cross-attention layer).
    int paddingColumn() const { return showPadding_ ? 1 : -1; }
    int firstValueColumn() const { return showPadding_ ? 2 : 1; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    void messageRequested(const QString& message);
    void editAccepted();

private:
    bool paddedAt(int row) const {
        return row < static_cast<int>(padding_.size()) && padding_[row];
    }

    document::AttentionDocument* document_;
    Stream stream_;
    // What the views were last told, to find what changed.
    std::vector<std::string> tokens_;
    std::vector<bool> padding_;
    MatrixD values_;
    bool showPadding_ = false;
    int decimals_ = 3;
};

}  // namespace ae::ui
