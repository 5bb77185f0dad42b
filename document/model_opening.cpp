#include "document/model_opening.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <algorithm>
#include <utility>

#include "document/model_layer.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::document {

namespace {

// Ids a model without a tokenizer starts on (the golden models' case A, wrapped into the
// vocabulary).
const long long kDefaultIds[] = {7, 41, 3, 59, 22, 15, 36};
const char* const kDefaultText = "When Mary and John went to the store, John gave a drink to";

bool hasTokenizerFiles(const QString& folder) {
    const QDir dir(folder);
    for (const char* name : {"tokenizer.json", "vocab.json", "vocab.txt"}) {
        if (dir.exists(QLatin1String(name))) return true;
    }
    return false;
}

QString withConsequence(const QString& message, const QString& consequence) {
    return consequence.isEmpty() ? message : QObject::tr("%1; %2").arg(message, consequence);
}

// What a user's opening runs on: the caller's text or ids; else a built-in model's own text (with
// a tokenizer) or ids; else a default text (with a tokenizer) or default ids.
ModelInput inputToOpenOn(ModelInput input, const io::BuiltInAbout& about,
                         const io::Tokenizer* tokenizer, long long vocabulary) {
    if (input.text.isEmpty() && input.ids.empty()) {
        if (tokenizer && !about.text.isEmpty()) {
            input.text = about.text;
        } else if (!about.ids.empty()) {
            input.ids = about.ids;
        }
    }
    if (input.ids.empty()) {
        if (tokenizer) {
            if (input.text.isEmpty()) input.text = QString::fromLatin1(kDefaultText);
            const std::vector<int> encoded = tokenizer->encode(input.text);
            input.ids.assign(encoded.begin(), encoded.end());
        } else {
            input.text.clear();
            for (long long id : kDefaultIds)
                input.ids.push_back(id % vocabulary);
        }
    }
    return input;
}

}  // namespace

const model::Model* LoadedModel::model() const {
    return folder ? &folder->model() : nullptr;
}

QString LoadedModel::directory() const {
    return folder ? folder->directory() : QString();
}

QString LoadedModel::location() const {
    return builtIn.isEmpty() ? directory() : io::builtInPrefix() + builtIn;
}

bool LoadedModel::isReferredToBy(const ModelReference& r) const {
    if (!folder || r.fingerprint != fingerprint) return false;
    return builtIn.isEmpty() ? r.builtIn.isEmpty() && r.folder == directory()
                             : r.builtIn == builtIn;
}

QString LoadedModel::tokenLabel(long long id) const {
    if (tokenizer) {
        const QString text = tokenizer->displayText(static_cast<int>(id));
        if (!text.isEmpty()) return text;
    }
    return QStringLiteral("#%1").arg(id);
}

std::vector<std::string> LoadedModel::tokenLabels(const std::vector<long long>& ids) const {
    std::vector<std::string> labels;
    for (long long id : ids)
        labels.push_back(tokenLabel(id).toStdString());
    return labels;
}

ModelReference LoadedModel::referenceFor(const ModelInput& input, int layer, int head) const {
    ModelReference r;
    r.folder = directory();
    r.builtIn = builtIn;
    r.fingerprint = fingerprint;
    r.text = input.text;
    r.ids = input.ids;
    r.attentionMask = input.attentionMask;
    r.textPair = input.textPair;
    r.tokenTypes = input.tokenTypes;
    r.pairStart = input.pairStart;
    r.layer = layer;
    r.head = head;
    return r;
}

Scene LoadedModel::layerScene(const WindowRun& run, int layer, const ModelReference& reference,
                              const Scene* sameLayer) const {
    return modelLayerScene(*model(), run, layer, reference, tokenLabels(run.tokens), sameLayer);
}

OpenRequest userOpenRequest(const QString& location, const QString& text,
                            std::vector<long long> ids) {
    OpenRequest request;
    if (io::isBuiltInArgument(location))
        request.model.builtIn = io::builtInName(location);
    else
        request.model.folder = QFileInfo(location).absoluteFilePath();
    request.model.text = text;
    request.model.ids = std::move(ids);
    return request;
}

std::optional<OpenRequest> savedLayerRequest(const QByteArray& json, const QString& fileName,
                                             QString* refusal) {
    const QJsonObject view = QJsonDocument::fromJson(json).object().value("view").toObject();
    std::string viewJson = QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
    if (!fileName.isEmpty()) viewJson = withFolderResolvedFrom(viewJson, fileName);
    const std::optional<ModelReference> r = modelReference(viewJson);
    const QString named = fileName.isEmpty() ? QObject::tr("The restored scene") : fileName;
    if (!r) {
        *refusal = QObject::tr(
                       "%1: takes its numbers from a model, but names none it can open "
                       "(view.model)")
                       .arg(named);
        return std::nullopt;
    }
    return OpenRequest{*r,
                       QObject::tr("%1 holds only what was changed in the layer, so it cannot be "
                                   "shown without it")
                           .arg(named),
                       {}};
}

Scene savedLayerScene(const QByteArray& json, const QString& fileName, const Scene& modelLayer) {
    Scene scene = io::parseScene(json, modelLayer);
    if (!fileName.isEmpty()) scene.viewJson = withFolderResolvedFrom(scene.viewJson, fileName);
    return scene;
}

QString checkOpenRequest(OpenRequest& request) {
    ModelReference& r = request.model;
    if (!r.builtIn.isEmpty()) {
        const std::vector<io::BuiltInModel> available = io::builtInModels();
        const auto found =
            std::find_if(available.begin(), available.end(),
                         [&](const io::BuiltInModel& m) { return m.name == r.builtIn; });
        if (found == available.end())
            return withConsequence(io::unknownBuiltInMessage(r.builtIn, available),
                                   request.consequence);
        r.folder = found->folder;
        if (!request.forSavedScene()) {
            request.about = found->about;
            if (!r.text.isEmpty() || !r.ids.empty()) {  // the caller's input wins over about.json's
                request.about.text.clear();
                request.about.ids.clear();
            }
            r.layer = request.about.layer;
            r.head = request.about.head;
        }
    }
    if (request.forSavedScene() && !QFileInfo(r.folder).isDir())
        return withConsequence(
            QObject::tr("%1: the model folder is not there (moved or deleted)").arg(r.folder),
            request.consequence);
    return {};
}

OpenedModel openModel(const OpenRequest& request, int selectedPosition,
                      const PassReports& reports) {
    const ModelReference& r = request.model;
    OpenedModel opened;
    LoadedModel& loaded = opened.model;
    // The headers only: a big checkpoint's values are checked below, once the window shows it.
    loaded.folder = std::make_shared<io::ModelFolder>(r.folder, io::ModelFolder::Values::Unread);
    loaded.builtIn = r.builtIn;
    const model::Model& m = loaded.folder->model();
    if (m.config.isEncoderDecoder()) {
        // A saved scene names a one-stack model's layer (view.model); an encoder–decoder model's
        // layers are saved as plain scenes.
        if (request.forSavedScene())
            throw model::ModelError(
                withConsequence(
                    QObject::tr("%1: %2 is an encoder-decoder model, whose layers are "
                                "not saved as a model's layer")
                        .arg(r.folder, QString::fromLatin1(model::familyName(m.config.family))),
                    request.consequence)
                    .toStdString());
        loaded.folder->checkValues(reports.checking);
        opened.encoderDecoder = true;
        opened.input.text = r.text.isEmpty() ? request.about.text : r.text;
        opened.layer = r.layer;
        opened.head = r.head;
        return opened;
    }
    loaded.fingerprint = modelFingerprint(m);
    if (!r.fingerprint.isEmpty() && loaded.fingerprint != r.fingerprint) {
        const QString named = r.builtIn.isEmpty()
                                  ? r.folder
                                  : QObject::tr("built-in model %1 (%2)").arg(r.builtIn, r.folder);
        throw model::ModelError(
            withConsequence(QObject::tr("%1: the model changed since the scene was saved (then "
                                        "%2, now %3)")
                                .arg(named, r.fingerprint, loaded.fingerprint),
                            request.consequence)
                .toStdString());
    }
    if (hasTokenizerFiles(r.folder)) {
        try {
            loaded.tokenizer = std::make_shared<io::Tokenizer>(io::Tokenizer::load(r.folder));
            loaded.special = {loaded.tokenizer->maskToken(), loaded.tokenizer->separatorToken()};
        } catch (const io::TokenizerError& error) {
            loaded.tokenizerProblem = QString::fromStdString(error.what());
        }
    }
    opened.input = request.forSavedScene() ? r.input()
                                           : inputToOpenOn(r.input(), request.about,
                                                           loaded.tokenizer.get(), m.config.vocab);
    if (reports.starting)
        reports.starting(m.config.layers, m.config.heads,
                         static_cast<int>(opened.input.ids.size()));
    loaded.folder->checkValues(reports.checking);
    opened.run = runAndAnalyse(m, opened.input, selectedPosition, request.mapBudget, nullptr,
                               reports, loaded.special);
    const model::Config& c = m.config;
    opened.layer = r.layer < c.layers ? r.layer : 0;
    opened.head = r.head < c.heads ? r.head : 0;
    return opened;
}

}  // namespace ae::document
