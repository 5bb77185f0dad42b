#pragma once
// Opening a model for the session (document/model_session.h), one way for every source: a folder,
// a built-in model by name (io/model/builtin_models.h), or the model a saved scene's reference
// names. The request is checked on the GUI thread (checkOpenRequest), then the model is read,
// fingerprinted, given its tokenizer and run on its input on the worker (openModel).

#include <QByteArray>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.h"

#include "document/model_reference.h"
#include "document/run_analysis.h"
#include "io/model/builtin_models.h"

namespace ae::io {
class ModelFolder;
class Tokenizer;
}  // namespace ae::io

namespace ae::document {

struct OpenRequest {
    // Which model: `folder`, or the built-in model `builtIn`, found by name here wherever this
    // machine keeps it (checkOpenRequest sets `folder`). With a saved scene's reference, also the
    // fingerprint it was made on (empty: any model), and always the input and the layer and head.
    ModelReference model;
    // For a saved scene: what the user gets instead when its model cannot be opened ("the saved
    // layer is shown as a plain scene"), ending every refusal. Its folder must then be there and
    // its input is taken as it is. Empty when the user opens a model: an empty input is then the
    // built-in model's own (about.json), or a default.
    QString consequence;
    io::BuiltInAbout about;  // set by checkOpenRequest for a user opening a built-in model
    // The memory the first run may keep before it drops its maps (windowRunOptions).
    double mapBudget = defaultMapBudget();
    bool forSavedScene() const { return !consequence.isEmpty(); }
};

// On the GUI thread, before the work: looks the built-in model up (its folder, and for a user's
// opening its about.json: its input unless the request has one, its layer and head) and checks a
// saved scene's folder is there. Why the request is refused (one line), or empty.
QString checkOpenRequest(OpenRequest& request);

// A model open in the session: its folder, the name it has when built in, its tokenizer and its
// fingerprint, and what follows from them (the reference a layer scene keeps, token labels).
struct LoadedModel {
    std::shared_ptr<io::ModelFolder> folder;   // null: no model
    QString builtIn;                           // the built-in model's name, or empty
    std::shared_ptr<io::Tokenizer> tokenizer;  // null: none in the folder, or not readable
    QString tokenizerProblem;                  // why it could not be read, or empty
    QString fingerprint;                       // modelFingerprint()
    SpecialTokenIds special;                   // the tokenizer's [MASK] and [SEP], or -1

    const model::Model* model() const;  // null when there is none
    QString directory() const;
    // What ModelSession::open takes to open this model again: "builtin:NAME", or the folder.
    QString location() const;
    // Whether `r` refers to this model (the same built-in name, or the same folder; and the same
    // fingerprint).
    bool isReferredToBy(const ModelReference& r) const;
    // A token's label: the tokenizer's text, or "#id".
    QString tokenLabel(long long id) const;
    std::vector<std::string> tokenLabels(const std::vector<long long>& ids) const;
    ModelReference referenceFor(const ModelInput& input, int layer, int head) const;
    // Layer `layer` of `run`, a run of this model, as a scene (modelLayerScene).
    Scene layerScene(const WindowRun& run, int layer, const ModelReference& reference,
                     const Scene* sameLayer = nullptr) const;
};

// What the user's File › Open (or the gallery) asks for: `location`, a folder or "builtin:NAME",
// on `text` or `ids` (both empty: the model's own or a default).
OpenRequest userOpenRequest(const QString& location, const QString& text,
                            std::vector<long long> ids);

// A saved layer's file (io::takesNumbersFromModel) as a request to open the model its view names,
// its folder resolved against `fileName` (the file, or empty for a restored autosave) when there
// is one. Nothing, and why in `*refusal`, when it names none.
std::optional<OpenRequest> savedLayerRequest(const QByteArray& json, const QString& fileName,
                                             QString* refusal);
// The saved layer's scene: the file, holding the what-ifs, read against `modelLayer`, the layer as
// the model has it (everything else), its folder resolved against `fileName` when there is one.
// Throws SceneError.
Scene savedLayerScene(const QByteArray& json, const QString& fileName, const Scene& modelLayer);

struct OpenedModel {
    LoadedModel model;
    ModelInput input;  // what it ran on
    int layer = 0;     // the request's layer and head where the model has them, else 0
    int head = 0;
    AnalysedRun run;  // the model's own run on `input` (runAndAnalyse)
    // An encoder–decoder model: read and checked, not run (the translation session runs it on
    // input.text, its source); `run` is empty.
    bool encoderDecoder = false;
};

// On the worker: the model a checked request names, opened and run, with its analysis at
// `selectedPosition`. Throws model::ModelError (and io's errors) with the one line to show; a
// saved scene's model whose fingerprint changed is refused so. The folder's headers are read
// first, and `reports` hear the shape of the pass (starting), the check of every value
// (checking: a big checkpoint's values take seconds to read), then the first run as it goes
// (runAndAnalyse).
OpenedModel openModel(const OpenRequest& request, int selectedPosition,
                      const PassReports& reports = {});

}  // namespace ae::document
