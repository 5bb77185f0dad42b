#pragma once
// The "what happens if" controls, always visible: head count, scaling divisor, mask and fill.
// Every control edits through the document, and follows the document back (undo, redo, a new
// scene). A slider drag is one undo step: beginInteraction on press, endInteraction on release.

#include <QStringList>
#include <QWidget>
#include <vector>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QToolButton;
class QDoubleSpinBox;
class QLabel;
class QPushButton;
class QSlider;

namespace ae::document {
class AttentionDocument;
}  // namespace ae::document

namespace ae::ui {

class ControlsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ControlsPanel(document::AttentionDocument* document, QWidget* parent = nullptr);

    // The divisor range of the scaling slider, on a log scale.
    static constexpr double kMinDivisor = 0.1;
    static constexpr double kMaxDivisor = 100.0;
    static constexpr int kScaleSteps = 300;  // 0.01 decades a step

    // Why the last head count was refused (empty when none is shown).
    QString headsMessage() const;
    // What the open layer does beyond the plain recipe (layerFeatureLines), shown above the
    // heads; empty hides it.
    void setLayerFeatures(const QStringList& lines);

signals:
    // A refused head count's reason, also shown under the heads slider.
    void messageRequested(const QString& message);

private:
    void syncFromDocument();
    void connectDrag(QSlider* slider);
    void applyHeads(int position);
    void applyKeyValueHeads(int position);
    void syncKeyValueHeads();
    void applyDivisor(int position);
    void applyWindow(int position);
    void applyFill();
    void applyAblation();
    void rebuildHeadSwitches(int heads);

    document::AttentionDocument* document_;
    std::vector<int> headChoices_;  // divisors of d_proj, one per slider position
    QSlider* heads_;
    QLabel* layerFeatures_;
    QLabel* headsLabel_;
    QLabel* headsMessage_;  // a refused head count, until the next accepted one
    // Grouped-query attention: the kv head count, one of the divisors of the head count.
    std::vector<int> kvChoices_;
    QSlider* kvHeads_;
    QLabel* kvHeadsLabel_;
    QSlider* scale_;
    QLabel* scaleLabel_;
    QPushButton* sqrtDk_;
    QPushButton* sqrtDmodel_;
    QPushButton* none_;
    QCheckBox* causal_;
    QSlider* window_;
    QLabel* windowLabel_;
    QComboBox* fill_;
    QDoubleSpinBox* fillValue_;
    QPushButton* clearCustom_;
    // One toggle a head: pressed means switched off (Scene::ablation), and how.
    QGridLayout* headSwitchGrid_;
    std::vector<QToolButton*> headSwitches_;
    QComboBox* ablationMode_;
};

}  // namespace ae::ui
