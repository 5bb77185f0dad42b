#pragma once
// The Workbench tab's analyses on the open model (core/model/workbench.h): activation patching of
// the model's text (the clean run) against a corrupted text of the same length, the logit lens,
// direct logit attribution and composition scores.
//
// The settings (the mode, the corrupted text, the answer and foil tokens, the position) are part
// of the document's scene, as a "workbench" object of its view beside the "model" one: committing
// them is an undo step, Save keeps them and opening a file restores them. The text itself is the
// model's (ModelSession).
//
// An analysis runs on a thread of its own, reports its progress and can be cancelled; its result
// arrives as a signal. A what-if that switches heads off (by zeros) is carried into every run the
// analysis makes, so the workbench shows the edited model and says so; a what-if that edits this
// text's numbers cannot be carried to a second text, and the workbench says it shows the model
// without it.
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model/workbench.h"

namespace ae::document {

class ModelSession;

enum class WorkbenchMode { Patching, Lens, Attribution, Composition };
// The names a scene's view holds: "patch", "lens", "dla" and "composition" (as `analyse` names
// them).
QString workbenchModeKey(WorkbenchMode mode);
std::optional<WorkbenchMode> workbenchModeFromKey(const QString& key);

struct WorkbenchSettings {
    WorkbenchMode mode = WorkbenchMode::Patching;
    // The corrupted prompt: a text for the model's tokenizer, or ids ("7 41 3" or "7,41,3") when
    // the folder has no tokenizer.
    QString corrupted;
    // The answer and the foil: one token each, as text (" Mary" tokenizes to one token) or as an
    // id ("#5"; a bare number without a tokenizer). An empty foil: the answer's logit alone.
    QString target, foil;
    int position = -1;       // the position the metric reads; -1: the last token
    char composition = 'k';  // which composition the matrix shows: 'q', 'k' or 'v'
    // The lens curve: the answer's (and foil's) probability, or the logit difference
    // logit(answer) − logit(foil) (the answer's logit without a foil) across the layers.
    bool lensLogitDifference = false;
    bool operator==(const WorkbenchSettings& o) const {
        return mode == o.mode && corrupted == o.corrupted && target == o.target && foil == o.foil &&
               position == o.position && composition == o.composition &&
               lensLogitDifference == o.lensLogitDifference;
    }
    bool operator!=(const WorkbenchSettings& o) const { return !(*this == o); }
};
// The "workbench" object of a scene's viewJson, or nothing (none, or not an object). Missing or
// mistyped keys keep their defaults.
std::optional<WorkbenchSettings> workbenchSettings(const std::string& viewJson);
// `viewJson` (an object's text, or empty) with its "workbench" key set (other keys kept).
std::string withWorkbenchSettings(const std::string& viewJson, const WorkbenchSettings& settings);

// One finished analysis, for the texts and tokens it was made on.
struct WorkbenchResult {
    WorkbenchMode mode = WorkbenchMode::Patching;
    std::vector<long long> cleanIds, corruptIds;  // corruptIds: patching only
    int position = 0;                             // resolved
    long long target = -1, foil = -1;
    // What the analysis ran on: empty for the model as it is, else a line the tab shows ("Edited
    // model: L1 H2 switched off").
    QString edited;
    std::optional<model::PatchingResult> patching;
    std::optional<model::LensResult> lens;
    std::optional<model::AttributionResult> attribution;
    std::optional<model::CompositionResult> composition;
    double compositionBaseline = 0;
    // Patching: the clean and corrupted runs (heads switched off as in the sweep), for the
    // patterns of a head side by side.
    std::shared_ptr<const model::ModelRun<float>> cleanRun, corruptRun;
};

class WorkbenchSession : public QObject {
    Q_OBJECT
public:
    explicit WorkbenchSession(ModelSession* session, QObject* parent = nullptr);
    ~WorkbenchSession() override;

    // ---- Settings ----
    const WorkbenchSettings& settings() const { return settings_; }
    void setSettings(const WorkbenchSettings& settings) { settings_ = settings; }
    // Changes the settings here (typing): commitSettings() makes them an undo step.
    void setCorrupted(const QString& text) { settings_.corrupted = text; }
    void setTarget(const QString& token) { settings_.target = token; }
    void setFoil(const QString& token) { settings_.foil = token; }
    void setPosition(int position) { settings_.position = position; }
    void setMode(WorkbenchMode mode) { settings_.mode = mode; }
    void setComposition(char which) { settings_.composition = which; }
    void setLensLogitDifference(bool on) { settings_.lensLogitDifference = on; }
    // Puts the settings into the document's scene as one undo step (when they differ from the
    // scene's and a layer of the model is open), named `description`.
    void commitSettings(const QString& description);

    // The corrupted prompt's ids, or a one-line reason (no model, no text, a token that is not
    // one id); and the positions where it differs from the model's text, when they are as long.
    std::vector<long long> corruptedIds(QString* problem) const;
    std::vector<int> changedPositions() const;
    // A token as the settings name one: its id, or -1 with a one-line reason.
    long long tokenId(const QString& token, const char* what, QString* problem) const;
    // What the analyses would carry of the document's what-if (empty: none), as the tab says it.
    QString editedModelNote() const;

    // ---- Running ----
    // Starts the settings' mode on the model's current text; refusals come as problem(). An
    // analysis under way is cancelled first.
    void run();
    void cancel();
    bool isRunning() const { return running_; }
    // The last finished analysis of any mode, or null.
    const std::shared_ptr<const WorkbenchResult>& lastResult() const { return result_; }
    // The memory an analysis may take (bytes; negative: this machine's physical memory). An
    // analysis whose runs would need more is refused before it allocates (tests set it low).
    void setMemoryLimit(double bytes) { memoryLimit_ = bytes; }

signals:
    void progress(double fraction);
    void finished();
    void problem(const QString& message);
    // The document's scene brought other settings (undo, redo, a file opened).
    void settingsChanged();

private:
    void followDocument();
    // The document's what-if as the analyses carry it to texts of their own: heads switched off
    // by zeros in `layer`, and the edited scene with the layer as the model has it when its
    // weights are edited (model::withLayerWeights); or, in `outside`, what it changes that the
    // model's weights do not hold (model::editOutsideWeights), and then nothing is carried.
    struct CarriedWhatIf {
        int layer = -1;
        std::vector<model::HeadAblation> headsOff;
        std::vector<std::string> weights;  // model::editedWeightNames
        std::shared_ptr<const Scene> scene, pristine;
        std::string outside;
    };
    // `withScenes`: copy the edited scene (for a run); the banner needs only the names.
    CarriedWhatIf carriedWhatIf(bool withScenes) const;
    static QString noteOf(const CarriedWhatIf& carried);
    void join();

    ModelSession* session_;
    WorkbenchSettings settings_;
    // The settings the document's scene holds, as last seen.
    WorkbenchSettings committed_;
    std::shared_ptr<const WorkbenchResult> result_;
    std::thread worker_;
    std::shared_ptr<std::atomic<bool>> cancel_;
    bool running_ = false;
    unsigned generation_ = 0;
    double memoryLimit_ = -1;
};

}  // namespace ae::document
