#pragma once
// The Workbench tab (document/workbench_session.h): the interpretability analyses on the open
// model's text. An analysis is chosen at the top (activation patching, the logit lens, direct
// logit attribution, composition scores), with the answer and foil tokens (typed, or picked from
// the model's predictions) and the position the metric reads; Run computes it with progress and
// Cancel, and its page shows it:
// - patching: head outputs and patterns (layer x head) and the residual stream (layer x
//   position), 1 restoring the clean answer; clicking a head shows its pattern on the clean and
//   the corrupted text side by side and opens it in the explorer;
// - the lens: the top token at every layer boundary and position, its probability as colour, and
//   the answer's (and foil's) probability across the layers;
// - attribution: every head's part of the logit difference, and the bar of the parts that add up
//   to it;
// - composition: the Q-, K- or V-composition matrix, and its scores against random weights'.
// Every map exports as an image (PNG/PDF/SVG) or its numbers (CSV/NPY) from its context menu.
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QStackedWidget;
class QToolButton;

namespace ae::document {
class ModelSession;
class WorkbenchSession;
struct WorkbenchSettings;
}  // namespace ae::document
namespace ae::plot {
class BarChart;
class EffectMap;
class LineChart;
}  // namespace ae::plot

namespace ae::ui {

class WorkbenchPanel : public QWidget {
    Q_OBJECT
public:
    explicit WorkbenchPanel(document::ModelSession* session, QWidget* parent = nullptr);

    document::WorkbenchSession* workbench() const { return workbench_; }
    QComboBox* modeBox() const { return mode_; }
    QLineEdit* corruptedField() const { return corrupted_; }
    QLineEdit* targetField() const { return target_; }
    QLineEdit* foilField() const { return foil_; }
    QSpinBox* positionBox() const { return position_; }
    QPushButton* runButton() const { return run_; }
    plot::EffectMap* headsMap() const { return heads_; }
    plot::EffectMap* patternMap() const { return pattern_; }
    plot::EffectMap* residualMap() const { return residual_; }
    plot::EffectMap* cleanPatternMap() const { return cleanPattern_; }
    plot::EffectMap* corruptPatternMap() const { return corruptPattern_; }
    plot::EffectMap* lensMap() const { return lens_; }
    plot::LineChart* lensCurve() const { return lensCurve_; }
    plot::EffectMap* attributionMap() const { return attribution_; }
    plot::BarChart* attributionBars() const { return attributionBars_; }
    plot::EffectMap* compositionMap() const { return composition_; }
    plot::BarChart* compositionHistogram() const { return compositionHistogram_; }
    QString statusText() const;
    QString editedText() const;
    // The answer field's picks: the model's top predictions at the position, as "#id" texts.
    QStringList predictionChoices() const;
    // Takes `settings` (a preset's) as one undo step and runs them.
    void applySettings(const document::WorkbenchSettings& settings);
    // Sets the tab to the composition matrix of `kind` ('q', 'k' or 'v') and computes it.
    void runComposition(char kind);
    // Shows head (layer, head)'s pattern on the clean and the corrupted text (after a sweep).
    void showHeadPatterns(int layer, int head);

signals:
    // "Open in explorer" on a head: the window brings the Explorer tab to the front.
    void explorerRequested();

private:
    void showSettings();
    void commit();
    void showChanges();
    void showTokenOf(QLineEdit* field, QLabel* label, const char* what);
    void showEditedNote(const QString& note);  // the banner: what the analyses ran on
    void showResult();
    void showPatching();
    void showLens();
    void showAttribution();
    void showComposition();
    QStringList tokenLabels(const std::vector<long long>& ids) const;

    document::ModelSession* session_;
    document::WorkbenchSession* workbench_;
    QComboBox *mode_, *compositionKind_;
    QLineEdit *corrupted_, *target_, *foil_;
    QToolButton *pickTarget_, *pickFoil_;
    QLabel *targetToken_, *foilToken_;
    QSpinBox* position_;
    QPushButton *run_, *cancel_, *openHead_;
    QProgressBar* progress_;
    QLabel *changes_, *status_, *edited_, *corruptedLabel_;
    QStackedWidget* pages_;
    plot::EffectMap *heads_, *pattern_, *residual_, *cleanPattern_, *corruptPattern_;
    plot::EffectMap *lens_, *attribution_, *composition_;
    plot::LineChart* lensCurve_;
    QComboBox* lensMeasure_;  // the curve: probability, or logit difference
    plot::BarChart *attributionBars_, *compositionHistogram_;
    int detailLayer_ = -1, detailHead_ = -1;
};

}  // namespace ae::ui
