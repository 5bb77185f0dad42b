#pragma once
// The Workbench tab: activation patching on the open model's text (document/workbench_session.h).
// A corrupted prompt of the same length, the answer and the foil; Run sweeps every head's
// output, every head's pattern and every residual row, with progress and Cancel; three maps show
// the normalised effects (layer x head, layer x head, layer x position), 1 restoring the clean
// answer.
#include <QWidget>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace ae::document {
class ModelSession;
class WorkbenchSession;
}  // namespace ae::document
namespace ae::plot {
class EffectMap;
}

namespace ae::ui {

class WorkbenchPanel : public QWidget {
    Q_OBJECT
public:
    explicit WorkbenchPanel(document::ModelSession* session, QWidget* parent = nullptr);

    document::WorkbenchSession* workbench() const { return workbench_; }
    QLineEdit* corruptedField() const { return corrupted_; }
    QLineEdit* targetField() const { return target_; }
    QLineEdit* foilField() const { return foil_; }
    QPushButton* runButton() const { return run_; }
    plot::EffectMap* headsMap() const { return heads_; }
    plot::EffectMap* patternMap() const { return pattern_; }
    plot::EffectMap* residualMap() const { return residual_; }
    QString statusText() const;

private:
    void showChanges();
    void showResult();

    document::ModelSession* session_;
    document::WorkbenchSession* workbench_;
    QLineEdit *corrupted_, *target_, *foil_;
    QPushButton *run_, *cancel_;
    QProgressBar* progress_;
    QLabel *changes_, *status_;
    plot::EffectMap *heads_, *pattern_, *residual_;
};

}  // namespace ae::ui
