#pragma once
// File › Import model weights…: one attention layer of a real model, in the window. The reader
// opens a .safetensors file (memory-mapped: listing is instant whatever its size) and/or .npy
// files (one tensor each, named by the file's name), sees the tensors (name, shape, dtype, size,
// with a filter), and maps them to the parts of the layer, starting from a guess made from the
// names (io::guessImportSpec). Import goes through io::importModel, the CLI's `import`: a refusal
// is shown in the dialog as that one line and everything stays as chosen; success replaces the
// document's scene as one undo step and closes the dialog. The folder and the choices are
// remembered (QSettings).

#include <QDialog>
#include <QHash>
#include <QMap>
#include <memory>
#include <string>
#include <vector>

#include "io/model/model_import.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTreeWidget;

namespace ae::io {
class SafetensorsFile;
}

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::ui {

class ModelImportDialog : public QDialog {
    Q_OBJECT
public:
    // The parts of the layer a tensor can be chosen for, one combo box each.
    enum class Part {
        Qkv,
        QkvBias,
        Query,
        QueryBias,
        Key,
        KeyBias,
        Value,
        ValueBias,
        Output,
        OutputBias,
        Embeddings,
        Positions,
        NormWeight,
        NormBias
    };

    explicit ModelImportDialog(document::AttentionDocument* document, QWidget* parent = nullptr);
    ~ModelImportDialog() override;

    // Opens a .safetensors file (replacing the list) and fills the choices: the remembered ones
    // if this is the file last imported from, else the guesses. False with *error (the reader's
    // one line, also shown in the dialog) for a file it refuses; the list is then empty.
    bool openModel(const QString& fileName, QString* error = nullptr);
    // Adds .npy files to the list, each one tensor named by its file name; with no .safetensors
    // file open they are the whole model. False with *error for a file that is not a float
    // .npy matrix or vector (the others are still added).
    bool addNpyFiles(const QStringList& fileNames, QString* error = nullptr);

    // The import the fields describe (tensor names as io::importModel takes them: .npy files by
    // path). Throws io::ModelImportError for token ids or words that do not parse.
    io::ModelImportSpec spec() const;
    // Imports with the current fields: true when the document took the new scene (one undo
    // step); false with *error, shown in the dialog as well, when anything refused.
    bool importNow(QString* error = nullptr);
    // The refusal shown, or empty.
    QString problemText() const;
    // Names in the list (in file order) and the ones the filter leaves visible.
    QStringList tensorNames() const;
    QStringList visibleTensorNames() const;
    QComboBox* partCombo(Part part) const { return combos_.value(part); }

    void accept() override;  // Import: closes only on success

private:
    void browseModel();
    void browseNpy();
    void browseVocabulary();
    void fillTable();
    void applyFilter();
    void applyGuess();
    void restoreChoices(const QVariantMap& choices);
    QVariantMap choices() const;
    void updateProjectionMode();
    void updateTokenPreview();
    void showProblem(const QString& text);
    QString tensorName(Part part) const;
    io::TensorReader reader() const;
    const std::vector<std::string>& vocabulary() const;  // the vocabulary file's, cached

    document::AttentionDocument* document_;
    std::unique_ptr<io::SafetensorsFile> file_;
    // .npy tensors: file name (as listed) → path.
    QMap<QString, QString> npyFiles_;
    std::vector<io::TensorShape> listed_;
    QStringList dtypes_;  // per listed_ entry
    QStringList sizes_;   // per listed_ entry, e.g. "7.1 MB"

    QLineEdit* modelPath_;
    QLineEdit* filter_;
    QLabel* count_;
    QTreeWidget* table_;
    QLabel* guessNote_;
    QComboBox* layout_;
    QRadioButton* fused_;
    QRadioButton* separate_;
    QHash<Part, QComboBox*> combos_;
    QList<QWidget*> fusedRows_, separateRows_;
    QLineEdit* tokens_;
    QComboBox* tokenKind_;
    QLineEdit* vocabularyPath_;
    QLabel* tokenPreview_;
    QSpinBox* heads_;
    QCheckBox* causal_;
    QLabel* problem_;
    QPushButton* importButton_;

    mutable QString vocabularyLoaded_;
    mutable std::vector<std::string> vocabulary_;
};

}  // namespace ae::ui
