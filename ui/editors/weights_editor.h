#pragma once
// The projection weights: W_Q, W_K, W_V and W_O as editable tables (one tab each, with an optional
// bias row), the projection mode, d_proj, the output projection, and the distribution and seed
// the Re-roll button draws from. Every change goes through the document, so it is undoable.

#include <QWidget>
#include <array>
#include <optional>

#include "document/attention_document.h"
#include "ui/editors/scene_editor.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;

namespace ae::ui {

class MatrixTableModel;

class WeightsEditor : public SceneEditor {
    Q_OBJECT
public:
    explicit WeightsEditor(document::AttentionDocument* document, QWidget* parent = nullptr);

    // Decimals shown in the cells (3 by default); the cell editor and tooltip show every digit.
    void setDecimals(int decimals);
    // What Re-roll and new cells (wider d_proj, a new W_O) are drawn from: the distribution
    // controls. At start, and whenever a scene with an `init` is loaded, they show that init.
    InitSpec drawSpec() const;
    QSize sizeHint() const override;

private:
    enum PageIndex { kQueryPage, kKeyPage, kValuePage, kOutputPage, kPageCount };
    struct Page {
        document::WeightMatrix matrix;
        document::WeightMatrix bias;
        QString name;  // W_Q ...
        QWidget* widget = nullptr;
        QCheckBox* biasCheck = nullptr;
        QLabel* note = nullptr;
        QTableView* view = nullptr;
        MatrixTableModel* model = nullptr;
        bool biasShown = false;     // the bias row is wanted (a zero bias is hidden by default)
        bool modelHasBias = false;  // the model's last row is the bias
        int shownHeads = 0;         // the head count the labels were made for
        long shownRevision = -1;    // the scheduler's weightsRevision() the values are from
    };

    void buildPage(PageIndex index, document::WeightMatrix matrix, document::WeightMatrix bias,
                   const QString& name);
    void refresh() override;
    void refreshPage(PageIndex index);
    void syncDistributionControls(const InitSpec& spec);
    void setBiasShown(PageIndex index, bool shown);
    void reroll();
    void reportHeads(int before, const Scene& after);

    std::array<Page, kPageCount> pages_;
    QComboBox* modeCombo_;
    QSpinBox* dProjSpin_;
    QCheckBox* outputCheck_;
    QComboBox* distributionCombo_;
    QDoubleSpinBox* stdSpin_;
    QDoubleSpinBox* lowSpin_;
    QDoubleSpinBox* highSpin_;
    QSpinBox* seedSpin_;
    QPushButton* rerollButton_;
    QLabel* identityNote_;
    QTabWidget* tabs_;
    int decimals_ = 3;
    // The scene's init when the distribution controls last followed it: they follow a new one (a
    // loaded scene), never overwrite what the user set for the next re-roll otherwise.
    std::optional<InitSpec> seenInit_;
    bool distributionSynced_ = false;
};

}  // namespace ae::ui
