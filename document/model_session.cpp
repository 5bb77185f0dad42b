#include "document/model_session.h"

#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/key_value_heads.h"
#include "core/model/model_layer_scene.h"
#include "document/attention_document.h"
#include "document/undo_commands.h"
#include "io/model/builtin_models.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::ui {

namespace {

const QLatin1String kModelKey("model");

// Ids a model without a tokenizer starts on (the golden models' case A, wrapped into the
// vocabulary).
const long long kDefaultIds[] = {7, 41, 3, 59, 22, 15, 36};
const char* const kDefaultText = "When Mary and John went to the store, John gave a drink to";

QJsonObject viewObject(const std::string& viewJson) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(viewJson)).object();
}

std::string viewText(const QJsonObject& view) {
    return QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
}

// Whether `folder` is near enough to `sceneDir` to be written relative to it: they share a
// folder below the file system's root, and the path needs at most two "../" (a model folder
// beside the scenes' folder moves with them; one across the file system stays absolute).
bool nearEnough(const QString& sceneDir, const QString& folder, const QString& relative) {
    const QString first = sceneDir.section(QLatin1Char('/'), 1, 1);
    if (first.isEmpty() || first != folder.section(QLatin1Char('/'), 1, 1)) return false;
    return !relative.startsWith(QLatin1String("../../../")) &&
           relative != QLatin1String("../../..");
}

template <typename M>
bool sameMatrix(const M& a, const M& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && (a.size() == 0 || a == b);
}

bool sameWeights(const Projections& p, const Projections& q) {
    return p.mode == q.mode && sameMatrix(p.query, q.query) && sameMatrix(p.key, q.key) &&
           sameMatrix(p.value, q.value) && sameMatrix(p.queryBias, q.queryBias) &&
           sameMatrix(p.keyBias, q.keyBias) && sameMatrix(p.valueBias, q.valueBias) &&
           p.hasOutput == q.hasOutput && sameMatrix(p.output, q.output) &&
           sameMatrix(p.outputBias, q.outputBias);
}

// Whether two scenes compute the same layer (title, tokens and view aside). The weights are
// compared unless the caller knows them to be the same.
bool sameLayer(const Scene& a, const Scene& b, bool weightsKnownSame, bool ablationAside = false) {
    return sameMatrix(a.embeddings, b.embeddings) && a.hasSource == b.hasSource &&
           a.positional.kind == b.positional.kind && a.norm.enabled == b.norm.enabled &&
           a.norm.kind == b.norm.kind && sameMatrix(a.norm.weight, b.norm.weight) &&
           sameMatrix(a.norm.bias, b.norm.bias) && a.norm.eps == b.norm.eps &&
           (weightsKnownSame || sameWeights(a.projections, b.projections)) && a.heads == b.heads &&
           a.kvHeads == b.kvHeads && a.qkNorm.enabled == b.qkNorm.enabled &&
           sameMatrix(a.qkNorm.queryWeight, b.qkNorm.queryWeight) &&
           sameMatrix(a.qkNorm.keyWeight, b.qkNorm.keyWeight) && a.qkNorm.eps == b.qkNorm.eps &&
           a.rotary == b.rotary && (ablationAside || a.ablation == b.ablation) &&
           sameValue(a.mask, b.mask) &&
           (a.maskFill == b.maskFill || (std::isnan(a.maskFill) && std::isnan(b.maskFill))) &&
           sameValue(a.scale, b.scale);
}

// Why the explorer's layer no longer fits the model (a what-if that cannot flow forward), or
// empty.
QString shapeProblem(const Scene& scene, const model::Config& c, int tokens) {
    if (scene.hasSource) return QObject::tr("the layer has a source (cross-attention)");
    if (scene.queryCount() != tokens)
        return QObject::tr("the layer has %1 tokens, the text %2")
            .arg(scene.queryCount())
            .arg(tokens);
    if (scene.dModel() != c.hidden)
        return QObject::tr("d_model is %1, the model's %2").arg(scene.dModel()).arg(c.hidden);
    // Another number of kv heads flows forward: the layer's record keeps its own grouping
    // (LayerRecord::keyValueHeads), and later layers only read its output.
    if (scene.heads != c.heads || scene.dHead() != c.headDim)
        return QObject::tr("the layer has %1 heads of %2, the model %3 of %4")
            .arg(scene.heads)
            .arg(scene.dHead())
            .arg(c.heads)
            .arg(c.headDim);
    if (scene.projections.mode != ProjectionMode::Separate || !scene.projections.hasOutput ||
        scene.dOut() != c.hidden)
        return QObject::tr("the projections are no longer the model's (separate, with W_O)");
    return {};
}

bool hasTokenizerFiles(const QString& folder) {
    const QDir dir(folder);
    for (const char* name : {"tokenizer.json", "vocab.json", "vocab.txt"}) {
        if (dir.exists(QLatin1String(name))) return true;
    }
    return false;
}

// `sameBefore`, if given, is the analysis of a run whose layers before `firstChangedLayer` are
// this run's (a what-if from that layer): their heads' summaries are taken from it.
RunAnalysis analyse(const model::ModelRun<float>& run, const model::Model& model,
                    int selectedPosition, const RunAnalysis* sameBefore = nullptr,
                    int firstChangedLayer = 0) {
    RunAnalysis a;
    const std::size_t kept =
        static_cast<std::size_t>(std::max(firstChangedLayer, 0)) * run.config.heads;
    if (sameBefore && sameBefore->summaries.size() >= kept) {
        a.summaries.assign(sameBefore->summaries.begin(), sameBefore->summaries.begin() + kept);
        const std::vector<model::HeadSummary> later = model::summarizeHeads(run, firstChangedLayer);
        a.summaries.insert(a.summaries.end(), later.begin(), later.end());
    } else {
        a.summaries = model::summarizeHeads(run);
    }
    const int tokens = static_cast<int>(run.tokens.size());
    if (run.config.isDecoder() && tokens > 0) {
        a.position =
            selectedPosition >= 0 && selectedPosition < tokens ? selectedPosition : tokens - 1;
        a.predictions = model::topPredictions(model, run, a.position, 10);
    }
    return a;
}

struct InductionResult {
    std::vector<double> scores;  // layers·heads values, or none
    QString problem;             // why there are none
};

// Every head's induction score, or why it cannot be measured. TransformerLens measures induction
// on a text repeated twice; the text itself serves. It needs a second pass on twice the tokens,
// so it follows the run's results instead of holding them up. A decoder's first copy is `run`
// itself (its rows never see a later token), so only the second copy's rows are computed, with
// the run as their cache (model::rerunModel). `ablations` (heads switched off by zeros) measure
// a what-if instead: the whole repeated text then runs with them.
InductionResult inductionOf(const model::ModelRun<float>& run, const model::Model& model,
                            const std::vector<model::HeadAblation>& ablations = {}) {
    const int tokens = static_cast<int>(run.tokens.size());
    const model::Config& c = run.config;
    if (tokens < 2)
        return {{}, QObject::tr("induction needs a text of at least 2 tokens, repeated twice")};
    if (!run.attentionMask.empty())
        return {{},
                QObject::tr("induction is measured on the text repeated twice, which padding "
                            "does not allow: unmark the padding")};
    if (c.positions != 0 && 2 * tokens > c.positions)
        return {{},
                QObject::tr("induction runs the text repeated twice: %1 tokens, more than the "
                            "model's %2 positions. A text of %3 tokens or fewer can be "
                            "measured")
                    .arg(2 * tokens)
                    .arg(c.positions)
                    .arg(c.positions / 2)};
    std::vector<long long> twice = run.tokens;
    twice.insert(twice.end(), run.tokens.begin(), run.tokens.end());
    model::RunOptions options;
    options.logitsForEveryPosition = false;  // only the weights are read
    options.ablations = ablations;
    const model::ModelRun<float> repeated =
        ablations.empty() ? model::rerunModel<float>(model, run, twice, options)
                          : model::runModel<float>(model, twice, options);
    return {model::inductionScores(repeated, 0, tokens), {}};
}

void setInduction(std::vector<model::HeadSummary>& summaries, const std::vector<double>& scores) {
    for (std::size_t i = 0; i < summaries.size(); ++i)
        summaries[i].induction =
            i < scores.size() ? scores[i] : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

// ---- The reference in viewJson ----

std::optional<ModelReference> modelReference(const std::string& viewJson) {
    if (viewJson.empty()) return std::nullopt;
    const QJsonValue value = viewObject(viewJson).value(kModelKey);
    if (!value.isObject()) return std::nullopt;
    const QJsonObject o = value.toObject();
    if (!o[QLatin1String("folder")].isString() && !o[QLatin1String("builtin")].isString())
        return std::nullopt;
    ModelReference r;
    r.folder = o[QLatin1String("folder")].toString();
    r.builtIn = o[QLatin1String("builtin")].toString();
    r.fingerprint = o[QLatin1String("fingerprint")].toString();
    r.text = o[QLatin1String("text")].toString();
    for (const QJsonValue id : o[QLatin1String("ids")].toArray())
        r.ids.push_back(static_cast<long long>(id.toDouble()));
    for (const QJsonValue m : o[QLatin1String("attention_mask")].toArray())
        r.attentionMask.push_back(m.toInt());
    r.layer = o[QLatin1String("layer")].toInt();
    r.head = o[QLatin1String("head")].toInt();
    return r;
}

std::string withModelReference(const std::string& viewJson, const ModelReference& r) {
    QJsonObject view = viewObject(viewJson);
    QJsonObject o;
    if (!r.builtIn.isEmpty()) o[QLatin1String("builtin")] = r.builtIn;
    if (r.builtIn.isEmpty() || !r.folder.isEmpty()) o[QLatin1String("folder")] = r.folder;
    o[QLatin1String("fingerprint")] = r.fingerprint;
    o[QLatin1String("text")] = r.text;
    QJsonArray ids, mask;
    for (long long id : r.ids)
        ids.append(static_cast<double>(id));
    for (int m : r.attentionMask)
        mask.append(m);
    o[QLatin1String("ids")] = ids;
    if (!r.attentionMask.empty()) o[QLatin1String("attention_mask")] = mask;
    o[QLatin1String("layer")] = r.layer;
    o[QLatin1String("head")] = r.head;
    view[kModelKey] = o;
    return viewText(view);
}

std::string withFolderRelativeTo(const std::string& viewJson, const QString& sceneFile) {
    std::optional<ModelReference> r = modelReference(viewJson);
    if (!r) return viewJson;
    if (!r->builtIn.isEmpty()) {
        // Where this machine keeps its built-in models is no business of the file.
        if (r->folder.isEmpty()) return viewJson;
        r->folder.clear();
        return withModelReference(viewJson, *r);
    }
    if (QDir::isRelativePath(r->folder)) return viewJson;
    const QString sceneDir = QFileInfo(sceneFile).absolutePath();
    const QString folder = QDir::cleanPath(r->folder);
    const QString relative = QDir(sceneDir).relativeFilePath(folder);
    if (QDir::isAbsolutePath(relative) || !nearEnough(sceneDir, folder, relative)) return viewJson;
    r->folder = relative.isEmpty() ? QStringLiteral(".") : relative;
    return withModelReference(viewJson, *r);
}

std::string withFolderResolvedFrom(const std::string& viewJson, const QString& sceneFile) {
    std::optional<ModelReference> r = modelReference(viewJson);
    if (!r || !r->builtIn.isEmpty() || QDir::isAbsolutePath(r->folder)) return viewJson;
    r->folder = QDir::cleanPath(QFileInfo(sceneFile).absoluteDir().absoluteFilePath(r->folder));
    return withModelReference(viewJson, *r);
}

QString keyValueCacheStatus(const Scene& scene, const model::Model* model,
                            const QString& modelFolder, bool brief) {
    // The window's engines compute in float.
    QString text =
        brief ? QStringLiteral("KV cache %1/token/layer")
                    .arg(QString::fromStdString(byteSizeText(
                        keyValueCacheNumbersPerTokenPerLayer(scene.keyValueHeads(), scene.dHead()) *
                        sizeof(float))))
              : QString::fromStdString(keyValueCacheLayerText(scene.keyValueHeads(), scene.dHead(),
                                                              sizeof(float), "float32"));
    if (model) {
        const QString name = QFileInfo(modelFolder).fileName();
        text += QStringLiteral("; ") +
                QString::fromStdString(keyValueCacheModelText(
                    (name.isEmpty() ? QStringLiteral("model") : name).toStdString(), model->config,
                    attentionWeightsDType(*model)));
    }
    return text;
}

QString modelFingerprint(const model::Model& m) {
    const model::Config& c = m.config;
    model::ModelWeights weights = m.weights;  // tensorSpecs points its slots into this copy
    std::uint32_t hash = 2166136261u;         // FNV-1a over names, dtypes and shapes
    const auto mix = [&hash](const std::string& text) {
        for (unsigned char ch : text) {
            hash ^= ch;
            hash *= 16777619u;
        }
    };
    for (const model::TensorSpec& spec : model::tensorSpecs(c, weights)) {
        const model::TensorRef& t = *spec.slot;
        mix(t.name + ' ' + std::to_string(static_cast<int>(t.dtype)) + ' ' +
            std::to_string(t.rows) + 'x' + std::to_string(t.cols) + ';');
    }
    return QStringLiteral("%1 L%2 H%3/%4 d%5 hd%6 V%7 I%8 #%9")
        .arg(QLatin1String(model::familyName(c.family)))
        .arg(c.layers)
        .arg(c.heads)
        .arg(c.kvHeads)
        .arg(c.hidden)
        .arg(c.headDim)
        .arg(c.vocab)
        .arg(c.intermediate)
        .arg(hash, 8, 16, QLatin1Char('0'));
}

// ---- The session ----

struct ModelSession::Loaded {
    std::shared_ptr<io::ModelFolder> folder;
    std::shared_ptr<io::Tokenizer> tokenizer;
    QString tokenizerProblem;
    QString fingerprint;
};

ModelSession::ModelSession(AttentionDocument* document, QObject* parent)
    : QObject(parent),
      document_(document),
      textTimer_(new QTimer(this)),
      progressTimer_(new QTimer(this)) {
    textTimer_->setSingleShot(true);
    textTimer_->setInterval(150);
    connect(textTimer_, &QTimer::timeout, this, [this] {
        if (!tokenizer_) {
            fail(tr("%1: no tokenizer in this folder: type ids instead").arg(folder()));
            return;
        }
        const std::vector<int> encoded = tokenizer_->encode(pendingText_);
        startInput({pendingText_, std::vector<long long>(encoded.begin(), encoded.end()),
                    input_.attentionMask.size() == encoded.size() ? input_.attentionMask
                                                                  : std::vector<int>{}});
    });
    progressTimer_->setSingleShot(true);
    connect(progressTimer_, &QTimer::timeout, this, [this] {
        if (busy_) emit progressShown(busyWhat_);
    });
    connect(document_, &AttentionDocument::sceneReset, this, &ModelSession::onSceneReset);
    connect(document_, &AttentionDocument::structureChanged, this, [this] {
        // An undo, a redo or another structural edit of the document while a typed input was
        // still running: the document wins, the typed input's run is dropped.
        if (inputJob_) {
            inputJob_ = false;
            dropJobs(Running);
        }
        followDocument();
    });
    connect(document_, &AttentionDocument::resultsChanged, this, &ModelSession::followDocument);
}

ModelSession::~ModelSession() {
    if (worker_) {
        worker_->quit();
        worker_->wait();
        delete workerContext_;
    }
}

const model::Model* ModelSession::model() const {
    return folder_ ? &folder_->model() : nullptr;
}

QString ModelSession::folder() const {
    return folder_ ? folder_->directory() : QString();
}

QString ModelSession::location() const {
    return builtIn_.isEmpty() ? folder() : io::builtInPrefix() + builtIn_;
}

bool ModelSession::refersToOpenModel(const ModelReference& r) const {
    if (!folder_ || r.fingerprint != fingerprint_) return false;
    return builtIn_.isEmpty() ? r.builtIn.isEmpty() && r.folder == folder() : r.builtIn == builtIn_;
}

QString ModelSession::tokenLabel(long long id) const {
    if (tokenizer_) {
        const QString text = tokenizer_->displayText(static_cast<int>(id));
        if (!text.isEmpty()) return text;
    }
    return QStringLiteral("#%1").arg(id);
}

std::vector<std::string> ModelSession::tokenLabels(const std::vector<long long>& ids) const {
    std::vector<std::string> labels;
    for (long long id : ids)
        labels.push_back(tokenLabel(id).toStdString());
    return labels;
}

// ---- Work on the worker thread ----

void ModelSession::post(Channel channel, const QString& what,
                        std::function<std::function<void()>()> work) {
    if (!worker_) {
        worker_ = new QThread(this);
        worker_->setObjectName(QStringLiteral("model session"));
        workerContext_ = new QObject;
        workerContext_->moveToThread(worker_);
        worker_->start();
    }
    const long serial = ++serials_[channel];
    pending_[channel] = true;
    if (channel != Induction) {  // a follow-up: the maps are up, nothing to wait for
        busyWhat_ = what;
        updateBusy();
        if (progressDelayMs_ <= 0)
            emit progressShown(busyWhat_);
        else
            progressTimer_->start(progressDelayMs_);
    }
    auto toWorker = [this, channel, serial, work = std::move(work)]() mutable {
        if (serial != serials_[channel]) return;  // dropped before it started
        QMetaObject::invokeMethod(
            workerContext_,
            [this, channel, serial, work = std::move(work)] {
                std::function<void()> deliver;
                try {
                    deliver = work();
                } catch (const std::exception& error) {  // ModelError, TokenizerError, bad_alloc
                    deliver = [this, channel, message = QString::fromStdString(error.what())] {
                        fail(message);
                        if (channel == Opening) emit openRefused(message);
                    };
                }
                QMetaObject::invokeMethod(
                    this,
                    [this, channel, serial, deliver = std::move(deliver)] {
                        if (serial != serials_[channel]) return;  // stale: newer work or cancel()
                        pending_[channel] = false;
                        deliver();
                        updateBusy();
                    },
                    Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
    };
    // A follow-up starts once the events queued now (the scene the results replace, the maps'
    // repaint) have run: on two cores it would otherwise take half the machine from them.
    if (channel == Induction)
        QTimer::singleShot(0, this, std::move(toWorker));
    else
        toWorker();
}

void ModelSession::dropJobs(Channel channel) {
    ++serials_[channel];
    pending_[channel] = false;
    updateBusy();
}

void ModelSession::updateBusy() {
    const bool busy = pending_[Opening] || pending_[Running];
    if (busy == busy_) return;
    busy_ = busy;
    if (!busy) progressTimer_->stop();
    emit busyChanged(busy);
}

void ModelSession::cancel() {
    inputJob_ = false;
    textTimer_->stop();
    dropJobs(Opening);
    dropJobs(Running);
    dropJobs(Induction);
    // The input shown goes back to what the document holds.
    if (layerOpen_) {
        const Input held{reference_.text, reference_.ids, reference_.attentionMask};
        if (!(input_ == held)) {
            input_ = held;
            emit inputChanged();
        }
    }
}

void ModelSession::waitUntilIdle(bool followUpsToo) {
    while (busy_ || textTimer_->isActive() || (followUpsToo && pending_[Induction])) {
        QEventLoop loop;
        connect(this, &ModelSession::busyChanged, &loop, &QEventLoop::quit);
        connect(this, &ModelSession::resultsChanged, &loop, &QEventLoop::quit);
        connect(textTimer_, &QTimer::timeout, &loop, &QEventLoop::quit);
        QTimer::singleShot(50, &loop, &QEventLoop::quit);
        loop.exec();
    }
}

void ModelSession::fail(const QString& message) {
    problem_ = message;
    emit problem(message);
}

// ---- Opening ----

void ModelSession::open(const QString& folderPath, const QString& text,
                        std::vector<long long> ids) {
    QString directory = QFileInfo(folderPath).absoluteFilePath();
    QString builtIn;
    io::BuiltInAbout about;
    if (io::isBuiltInArgument(folderPath)) {
        builtIn = io::builtInName(folderPath);
        const std::vector<io::BuiltInModel> available = io::builtInModels();
        const auto found =
            std::find_if(available.begin(), available.end(),
                         [&](const io::BuiltInModel& m) { return m.name == builtIn; });
        if (found == available.end()) {
            const QString message = io::unknownBuiltInMessage(builtIn, available);
            fail(message);
            emit openRefused(message);
            return;
        }
        directory = found->folder;
        about = found->about;
        if (!text.isEmpty() || !ids.empty()) {  // the caller's input wins over about.json's
            about.text.clear();
            about.ids.clear();
        }
    }
    const int position = selectedPosition_;
    post(Opening, tr("Opening %1").arg(QFileInfo(directory).fileName()),
         [this, directory, builtIn, about, text, position,
          ids = std::move(ids)]() -> std::function<void()> {
             auto loaded = std::make_shared<Loaded>();
             loaded->folder = std::make_shared<io::ModelFolder>(directory);
             const model::Model& m = loaded->folder->model();
             loaded->fingerprint = modelFingerprint(m);
             if (hasTokenizerFiles(directory)) {
                 try {
                     loaded->tokenizer =
                         std::make_shared<io::Tokenizer>(io::Tokenizer::load(directory));
                 } catch (const io::TokenizerError& error) {
                     loaded->tokenizerProblem = QString::fromStdString(error.what());
                 }
             }
             Input input{text, ids, {}};
             // A built-in model's own text (with a tokenizer) or ids, when the caller gave none.
             if (input.text.isEmpty() && input.ids.empty()) {
                 if (loaded->tokenizer && !about.text.isEmpty()) {
                     input.text = about.text;
                 } else if (!about.ids.empty()) {
                     input.ids = about.ids;
                 }
             }
             if (input.ids.empty()) {
                 if (loaded->tokenizer) {
                     if (input.text.isEmpty()) input.text = QString::fromLatin1(kDefaultText);
                     const std::vector<int> encoded = loaded->tokenizer->encode(input.text);
                     input.ids.assign(encoded.begin(), encoded.end());
                 } else {
                     input.text.clear();
                     for (long long id : kDefaultIds)
                         input.ids.push_back(id % m.config.vocab);
                 }
             }
             model::RunOptions options;
             options.logitsForEveryPosition = false;  // predictions: logitsAt
             auto run = std::make_shared<const Run>(model::runModel<float>(m, input.ids, options));
             auto analysis = std::make_shared<RunAnalysis>(analyse(*run, m, position));
             // The layer and head about.json names, when the model has them.
             const model::Config& c = m.config;
             const int layer = about.layer < c.layers ? about.layer : 0;
             const int head = about.head < c.heads ? about.head : 0;
             return [this, loaded, builtIn, input, run, analysis, layer, head] {
                 dropJobs(Running);  // runs of the model open before
                 inputJob_ = false;
                 folder_ = loaded->folder;
                 builtIn_ = builtIn;
                 tokenizer_ = loaded->tokenizer;
                 tokenizerProblem_ = loaded->tokenizerProblem;
                 fingerprint_ = loaded->fingerprint;
                 previousBase_.reset();
                 base_.reset();
                 installBase(run, input, *analysis);
                 input_ = input;
                 problem_.clear();
                 emit opened();
                 emit inputChanged();
                 const Scene scene = makeLayerScene(*run, layer, referenceFor(input, layer, head));
                 try {
                     document_->resetScene(scene);
                 } catch (const SceneError& error) {
                     fail(QString::fromStdString(error.what()));
                 }
             };
         });
}

void ModelSession::close() {
    if (!folder_) return;
    dropJobs(Running);
    inputJob_ = false;
    folder_.reset();
    builtIn_.clear();
    tokenizer_.reset();
    base_.reset();
    previousBase_.reset();
    current_.reset();
    analysis_ = {};
    baseAnalysis_ = {};
    layerOpen_ = false;
    pristine_.reset();
    emit closed();
}

void ModelSession::onSceneReset() {
    const std::optional<ModelReference> r = modelReference(document_->scene().viewJson);
    if (!r) {
        close();
        return;
    }
    if (refersToOpenModel(*r)) {
        followDocument();
        return;
    }
    // A scene file (or a restored autosave) made on a model: open it, but only if it is still
    // the model the scene was made on.
    close();
    openForReference(*r, tr("the saved layer is shown as a plain scene"),
                     [this](const Run&) { followDocument(); });
}

void ModelSession::openForReference(ModelReference reference, const QString& consequence,
                                    std::function<void(const Run& run)> whenOpen) {
    // A built-in model is looked up by its name here, wherever this machine keeps it.
    if (!reference.builtIn.isEmpty()) {
        const std::vector<io::BuiltInModel> available = io::builtInModels();
        const auto found =
            std::find_if(available.begin(), available.end(),
                         [&](const io::BuiltInModel& m) { return m.name == reference.builtIn; });
        if (found == available.end()) {
            const QString message = tr("%1; %2").arg(
                io::unknownBuiltInMessage(reference.builtIn, available), consequence);
            fail(message);
            emit openRefused(message);
            return;
        }
        reference.folder = found->folder;
    }
    const QString directory = reference.folder;
    if (!QFileInfo(directory).isDir()) {
        const QString message = tr("%1: the model folder is not there (moved or deleted); %2")
                                    .arg(directory, consequence);
        fail(message);
        emit openRefused(message);
        return;
    }
    close();  // the model open before, once this one is known to be there
    const int position = selectedPosition_;
    post(Opening, tr("Opening %1").arg(QFileInfo(directory).fileName()),
         [this, reference, position, whenOpen, consequence]() -> std::function<void()> {
             auto loaded = std::make_shared<Loaded>();
             loaded->folder = std::make_shared<io::ModelFolder>(reference.folder);
             const model::Model& m = loaded->folder->model();
             loaded->fingerprint = modelFingerprint(m);
             if (!reference.fingerprint.isEmpty() && loaded->fingerprint != reference.fingerprint) {
                 const QString named = reference.builtIn.isEmpty()
                                           ? reference.folder
                                           : QStringLiteral("built-in model %1 (%2)")
                                                 .arg(reference.builtIn, reference.folder);
                 throw model::ModelError(
                     tr("%1: the model changed since the scene was saved (then %2, now %3); %4")
                         .arg(named, reference.fingerprint, loaded->fingerprint, consequence)
                         .toStdString());
             }
             if (hasTokenizerFiles(reference.folder)) {
                 try {
                     loaded->tokenizer =
                         std::make_shared<io::Tokenizer>(io::Tokenizer::load(reference.folder));
                 } catch (const io::TokenizerError& error) {
                     loaded->tokenizerProblem = QString::fromStdString(error.what());
                 }
             }
             model::RunOptions options;
             options.logitsForEveryPosition = false;  // predictions: logitsAt
             options.attentionMask = reference.attentionMask;
             auto run =
                 std::make_shared<const Run>(model::runModel<float>(m, reference.ids, options));
             auto analysis = std::make_shared<RunAnalysis>(analyse(*run, m, position));
             return [this, loaded, reference, run, analysis, whenOpen] {
                 folder_ = loaded->folder;
                 builtIn_ = reference.builtIn;
                 tokenizer_ = loaded->tokenizer;
                 tokenizerProblem_ = loaded->tokenizerProblem;
                 fingerprint_ = loaded->fingerprint;
                 const Input input{reference.text, reference.ids, reference.attentionMask};
                 installBase(run, input, *analysis);
                 input_ = input;
                 problem_.clear();
                 emit opened();
                 emit inputChanged();
                 whenOpen(*run);
             };
         });
}

void ModelSession::openSavedLayer(const QByteArray& json, const QString& fileName, bool unsaved) {
    const QJsonObject view = QJsonDocument::fromJson(json).object().value("view").toObject();
    std::string viewJson = QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
    if (!fileName.isEmpty()) viewJson = withFolderResolvedFrom(viewJson, fileName);
    const std::optional<ModelReference> r = modelReference(viewJson);
    const QString named = fileName.isEmpty() ? tr("The restored scene") : fileName;
    if (!r) {
        const QString message =
            tr("%1: takes its numbers from a model, but names none it can open (view.model)")
                .arg(named);
        fail(message);
        emit openRefused(message);
        return;
    }
    const QString consequence =
        tr("%1 holds only what was changed in the layer, so it cannot be shown without it")
            .arg(named);
    openForReference(*r, consequence, [this, json, fileName, unsaved, named, r](const Run& run) {
        // The file holds the what-ifs; the layer as the model has it holds everything else.
        const Scene modelLayer = makeLayerScene(run, r->layer, *r);
        try {
            Scene scene = io::parseScene(json, modelLayer);
            if (!fileName.isEmpty())
                scene.viewJson = withFolderResolvedFrom(scene.viewJson, fileName);
            document_->resetScene(scene, fileName);
            if (unsaved) document_->markUnsaved();
            emit savedLayerOpened(
                QJsonDocument::fromJson(QByteArray::fromStdString(scene.viewJson)).object());
        } catch (const SceneError& error) {
            fail(QStringLiteral("%1: %2").arg(named, QString::fromStdString(error.what())));
            followDocument();
        }
    });
}

std::optional<Scene> ModelSession::modelLayerOf(const Scene& scene) const {
    const std::optional<ModelReference> r = modelReference(scene.viewJson);
    if (!r || !base_ || !refersToOpenModel(*r)) return std::nullopt;
    if (!(Input{r->text, r->ids, r->attentionMask} == baseInput_)) return std::nullopt;
    if (r->layer < 0 || r->layer >= base_->config.layers) return std::nullopt;
    return layerAsModelHasIt(r->layer, r->head);
}

// ---- Input ----

ModelReference ModelSession::referenceFor(const Input& input, int layer, int head) const {
    ModelReference r;
    r.folder = folder();
    r.builtIn = builtIn_;
    r.fingerprint = fingerprint_;
    r.text = input.text;
    r.ids = input.ids;
    r.attentionMask = input.attentionMask;
    r.layer = layer;
    r.head = head;
    return r;
}

void ModelSession::setText(const QString& text) {
    if (!folder_) return;
    pendingText_ = text;
    textTimer_->start();
}

void ModelSession::setIds(const std::vector<long long>& ids,
                          const std::vector<int>& attentionMask) {
    if (!folder_) return;
    textTimer_->stop();
    startInput({QString(), ids, attentionMask});
}

void ModelSession::setPadding(int position, bool padding) {
    if (!folder_ || position < 0 || position >= static_cast<int>(input_.ids.size())) return;
    std::vector<int> mask = input_.attentionMask;
    if (mask.size() != input_.ids.size()) mask.assign(input_.ids.size(), 1);
    mask[static_cast<std::size_t>(position)] = padding ? 0 : 1;
    if (std::all_of(mask.begin(), mask.end(), [](int m) { return m == 1; })) mask.clear();
    startInput({input_.text, input_.ids, mask});
}

void ModelSession::startInput(const Input& input) {
    if (layerOpen_ && input == baseInput_ &&
        Input{reference_.text, reference_.ids, reference_.attentionMask} == input)
        return;
    model::RunOptions options;
    options.logitsForEveryPosition = false;  // predictions: logitsAt
    options.attentionMask = input.attentionMask;
    try {
        if (input.ids.empty()) throw model::ModelError("ids: no tokens");
        model::checkInputs(model()->config, input.ids, options);
    } catch (const model::ModelError& error) {
        fail(QString::fromStdString(error.what()));
        return;
    }
    const Input before = input_;
    input_ = input;
    emit inputChanged();
    inputJob_ = true;
    const QString description = input.text != before.text ? tr("Change text")
                                : input.ids != before.ids ? tr("Change ids")
                                                          : tr("Change padding");
    std::shared_ptr<io::ModelFolder> folder = folder_;
    const int position = selectedPosition_;
    // The rows before the first changed token are the last run's (a decoder's earlier rows never
    // see a later token): typing at the end reruns the new tokens only.
    std::shared_ptr<const Run> previous = base_;
    post(
        Running, tr("Running the model"),
        [this, folder, input, options, description, position, previous]() -> std::function<void()> {
            const model::Model& m = folder->model();
            auto run = std::make_shared<const Run>(
                previous ? model::rerunModel<float>(m, *previous, input.ids, options)
                         : model::runModel<float>(m, input.ids, options));
            auto analysis = std::make_shared<RunAnalysis>(analyse(*run, m, position));
            return [this, input, run, analysis, description] {
                inputJob_ = false;
                const int layer = layerOpen_ ? reference_.layer : 0;
                const int head = layerOpen_ ? reference_.head : 0;
                // The layer as the model has it for the last text has the same weights: copied,
                // they need no conversion from the file.
                const std::shared_ptr<const Scene> sameLayer =
                    pristine_ && pristineLayer_ == layer ? pristine_ : nullptr;
                installBase(run, input, *analysis);
                // The new scene is also the layer as the model has it, which following the
                // document compares against: made once, shared.
                pristine_ = std::make_shared<const Scene>(
                    makeLayerScene(*run, layer, referenceFor(input, layer, head), sameLayer.get()));
                pristineLayer_ = layer;
                QString error;
                if (!document_->replaceScene(pristine_, description, &error)) fail(error);
            };
        });
}

void ModelSession::installBase(std::shared_ptr<const Run> run, const Input& input,
                               const RunAnalysis& analysis) {
    if (base_ && !(baseInput_ == input)) {
        previousBase_ = base_;
        previousInput_ = baseInput_;
        previousAnalysis_ = baseAnalysis_;
    }
    base_ = std::move(run);
    baseInput_ = input;
    baseAnalysis_ = analysis;
    pristine_.reset();
    measureInductionLater();
}

void ModelSession::measureInductionLater() {
    std::shared_ptr<const Run> run = base_;
    std::shared_ptr<io::ModelFolder> folder = folder_;
    if (!run || !folder) return;
    post(Induction, tr("Measuring induction"), [this, run, folder] {
        auto result = std::make_shared<InductionResult>(inductionOf(*run, folder->model()));
        return [this, run, result] {
            if (run != base_) return;  // the text changed meanwhile
            const bool measured = result->problem.isEmpty();
            setInduction(baseAnalysis_.summaries, result->scores);
            baseAnalysis_.induction =
                measured ? model::InductionState::Measured : model::InductionState::Unmeasurable;
            baseAnalysis_.inductionNote = result->problem;
            if (current_ == base_) {
                setInduction(analysis_.summaries, result->scores);
                analysis_.induction = baseAnalysis_.induction;
                analysis_.inductionNote = baseAnalysis_.inductionNote;
            } else if (analysis_.induction == model::InductionState::Stale) {
                // The what-if shows the model's own scores, which have just come.
                setInduction(analysis_.summaries, result->scores);
                if (!measured) {
                    analysis_.induction = model::InductionState::Unmeasurable;
                    analysis_.inductionNote = result->problem;
                }
            }
            emit resultsChanged();
        };
    });
}

bool ModelSession::measureWhatIfInduction(std::shared_ptr<const Run> whatIf,
                                          std::vector<int> headsOff) {
    std::shared_ptr<io::ModelFolder> folder = folder_;
    if (!folder || !whatIf || headsOff.empty() ||
        baseAnalysis_.induction == model::InductionState::Unmeasurable)
        return false;
    std::vector<model::HeadAblation> ablations;
    for (int h : headsOff)
        ablations.push_back({reference_.layer, h});
    post(Induction, tr("Measuring induction on the what-if"), [this, whatIf, folder, ablations] {
        auto result =
            std::make_shared<InductionResult>(inductionOf(*whatIf, folder->model(), ablations));
        return [this, whatIf, result] {
            if (whatIf != current_ || !result->problem.isEmpty()) return;
            setInduction(analysis_.summaries, result->scores);
            analysis_.induction = model::InductionState::Measured;
            analysis_.inductionNote.clear();
            emit resultsChanged();
        };
    });
    return true;
}

void ModelSession::measureInduction() {
    if (analysis_.induction == model::InductionState::Unmeasurable ||
        analysis_.induction == model::InductionState::Stale) {
        emit problem(tr("Induction not measured: %1").arg(analysis_.inductionNote));
        return;
    }
    if (baseAnalysis_.induction == model::InductionState::Pending && !pending_[Induction])
        measureInductionLater();
}

Scene ModelSession::makeLayerScene(const Run& run, int layer, const ModelReference& reference,
                                   const Scene* sameLayer) const {
    // layerScene reads the layer's residual input and the mask: the float run's, in double.
    model::ModelRun<double> inDouble;
    inDouble.config = run.config;
    inDouble.tokens = run.tokens;
    inDouble.attentionMask = run.attentionMask;
    inDouble.layers.resize(run.layers.size());
    inDouble.layers[static_cast<std::size_t>(layer)].hiddenIn =
        run.layers[static_cast<std::size_t>(layer)].hiddenIn.cast<double>();
    Scene scene;
    if (sameLayer) {
        scene = *sameLayer;
        model::putLayerInput(scene, inDouble, layer, tokenLabels(run.tokens));
    } else {
        scene = model::layerScene(*model(), inDouble, layer, tokenLabels(run.tokens));
    }
    scene.title = QStringLiteral("%1 · layer %2")
                      .arg(QFileInfo(reference.folder).fileName())
                      .arg(layer)
                      .toStdString();
    scene.viewJson = withModelReference({}, reference);
    return scene;
}

Scene ModelSession::layerAsModelHasIt(int layer, int head) const {
    return makeLayerScene(*base_, layer, referenceFor(baseInput_, layer, head));
}

void ModelSession::openHead(int layer, int head) {
    if (!folder_ || !base_) return;
    const model::Config& c = model()->config;
    if (layer < 0 || layer >= c.layers || head < 0 || head >= c.heads) return;
    if (layerOpen_ && layer == reference_.layer && head == reference_.head) return;
    QString error;
    if (layerOpen_ && layer == reference_.layer) {
        // The same layer: its what-ifs stay; only the head in the reference changes.
        Scene scene = document_->scene();
        ModelReference reference = reference_;
        reference.head = head;
        scene.viewJson = withModelReference(scene.viewJson, reference);
        if (!document_->replaceScene(scene, tr("Open head %1.%2").arg(layer).arg(head), &error))
            fail(error);
        return;
    }
    // The layer as the model has it, which what-ifs are compared against: made once, shared.
    pristine_ = std::make_shared<const Scene>(
        makeLayerScene(*base_, layer, referenceFor(baseInput_, layer, head)));
    pristineLayer_ = layer;
    if (!document_->replaceScene(pristine_, tr("Open layer %1, head %2").arg(layer).arg(head),
                                 &error))
        fail(error);
}

// ---- Following the document ----

void ModelSession::followDocument() {
    const std::optional<ModelReference> r = modelReference(document_->scene().viewJson);
    const bool wasOpen = layerOpen_;
    const int oldLayer = layer(), oldHead = head();
    layerOpen_ = r && refersToOpenModel(*r);
    if (!layerOpen_) {
        if (wasOpen) emit openHeadChanged(-1, -1);
        if (current_ != base_) publish(base_, baseAnalysis_);
        return;
    }
    if (inputJob_) return;  // the document follows once the typed input has run
    reference_ = *r;
    const Input held{r->text, r->ids, r->attentionMask};
    if (!(input_ == held)) {
        input_ = held;
        emit inputChanged();
    }
    if (!wasOpen || oldLayer != r->layer || oldHead != r->head)
        emit openHeadChanged(r->layer, r->head);
    if (!(baseInput_ == held)) {
        if (previousBase_ && previousInput_ == held) {
            std::swap(base_, previousBase_);
            std::swap(baseInput_, previousInput_);
            std::swap(baseAnalysis_, previousAnalysis_);
            pristine_.reset();
            // Its induction scores may not have arrived before the text changed.
            if (baseAnalysis_.induction == model::InductionState::Pending) measureInductionLater();
        } else {
            // An undo back to an input this session no longer holds: run it again (the same
            // ids give the same numbers).
            std::shared_ptr<io::ModelFolder> folder = folder_;
            const int position = selectedPosition_;
            post(Running, tr("Running the model"),
                 [this, folder, held, position]() -> std::function<void()> {
                     const model::Model& m = folder->model();
                     model::RunOptions options;
                     options.logitsForEveryPosition = false;  // predictions: logitsAt
                     options.attentionMask = held.attentionMask;
                     auto run =
                         std::make_shared<const Run>(model::runModel<float>(m, held.ids, options));
                     auto analysis = std::make_shared<RunAnalysis>(analyse(*run, m, position));
                     return [this, held, run, analysis] {
                         installBase(run, held, *analysis);
                         followDocument();
                     };
                 });
            return;
        }
    }
    computeCurrent();
}

void ModelSession::computeCurrent() {
    const ComputeScheduler& scheduler = document_->scheduler();
    if (!scheduler.hasLatestResults()) return;  // resultsChanged brings us back
    const Scene& scene = document_->scene();
    const int layer = reference_.layer;
    if (!pristine_ || pristineLayer_ != layer) {
        pristine_ = std::make_shared<const Scene>(
            makeLayerScene(*base_, layer, referenceFor(baseInput_, layer, reference_.head)));
        pristineLayer_ = layer;
    }
    // Below, the model's own run is shown unless a what-if is computed: a what-if still on the
    // worker (an undo pressed twice quickly) would replace it when it comes. A typed input's run
    // stays: it brings another layer.
    const auto dropWhatIf = [this] {
        if (!inputJob_) dropJobs(Running);
    };
    if (sameLayer(scene, *pristine_, document_->hasWeightsOf(pristine_))) {
        dropWhatIf();
        if (current_ != base_)
            publish(base_, baseAnalysis_);
        else if (analysis_.summaries.empty())
            publish(base_, baseAnalysis_);
        return;
    }
    if (!scheduler.errorText().isEmpty()) {
        fail(tr("The layer does not compute (%1); the later layers show the model as it is")
                 .arg(scheduler.errorText()));
        dropWhatIf();
        publish(base_, baseAnalysis_);
        return;
    }
    const QString mismatch =
        shapeProblem(scene, base_->config, static_cast<int>(base_->tokens.size()));
    if (!mismatch.isEmpty()) {
        fail(tr("This what-if cannot flow through the model: %1").arg(mismatch));
        dropWhatIf();
        publish(base_, baseAnalysis_);
        return;
    }
    // The engine's results, copied here: the worker must not read the engine the GUI shows.
    const AttentionEngine<float>& engine = document_->engine();
    auto record = std::make_shared<model::LayerRecord<float>>();
    record->hiddenIn = scene.embeddings.cast<float>();
    record->query = engine.query();
    record->key = engine.key();
    record->value = engine.value();
    if (scene.keyValueHeads() != base_->config.kvHeads)
        record->keyValueHeads = scene.keyValueHeads();
    for (int h = 0; h < scene.heads; ++h) {
        record->scores.push_back(engine.scores(h));
        record->weights.push_back(engine.weights(h));
    }
    auto attentionOut = std::make_shared<const model::Matrix<float>>(engine.output());
    // Heads switched off by zeros and nothing else: the one what-if that carries over to the
    // text repeated twice, so its induction can be measured.
    std::vector<int> headsOff;
    if (!scene.ablation.byMean &&
        sameLayer(scene, *pristine_, document_->hasWeightsOf(pristine_), true))
        headsOff = scene.ablation.heads;
    std::shared_ptr<io::ModelFolder> folder = folder_;
    std::shared_ptr<const Run> base = base_;
    const int position = selectedPosition_;
    const RunAnalysis baseAnalysis = baseAnalysis_;
    post(Running, tr("Recomputing layers %1 to %2").arg(layer).arg(base->config.layers - 1),
         [this, folder, base, record, attentionOut, layer, position, baseAnalysis,
          headsOff]() -> std::function<void()> {
             const model::Model& m = folder->model();
             // The base run's layers before this one; this layer's record and every later one
             // are computed below, so copying them would be wasted.
             auto run = std::make_shared<Run>();
             run->config = base->config;
             run->tokens = base->tokens;
             run->attentionMask = base->attentionMask;
             run->options = base->options;
             run->layers.resize(base->layers.size());
             std::copy(base->layers.begin(), base->layers.begin() + layer, run->layers.begin());
             const model::Matrix<float> residualIn = record->hiddenIn;
             run->layers[static_cast<std::size_t>(layer)] = std::move(*record);
             model::RunOptions options;
             options.logitsForEveryPosition = false;  // predictions: logitsAt
             options.attentionMask = base->attentionMask;
             model::resumeAfterAttention<float>(m, *run, layer, residualIn, *attentionOut, options);
             RunAnalysis analysis = analyse(*run, m, position, &baseAnalysis, layer);
             analysis.basePredictions = baseAnalysis.predictions;
             std::shared_ptr<const Run> current = std::move(run);
             return [this, current, analysis, headsOff] {
                 publish(current, analysis, measureWhatIfInduction(current, headsOff));
             };
         });
}

void ModelSession::publish(std::shared_ptr<const Run> current, RunAnalysis analysis,
                           bool whatIfInductionComing) {
    current_ = std::move(current);
    analysis_ = std::move(analysis);
    // A what-if's measurement on the same channel may have made the model's own stale.
    if (current_ == base_ && baseAnalysis_.induction == model::InductionState::Pending &&
        !pending_[Induction])
        measureInductionLater();
    if (current_ != base_) {
        // Until a what-if's own induction is measured (measureWhatIfInduction), or when it cannot
        // be, the column shows the model's scores, marked as such: they may have arrived after
        // the what-if's work started.
        std::vector<double> own;
        for (const model::HeadSummary& h : baseAnalysis_.summaries)
            own.push_back(h.induction);
        setInduction(analysis_.summaries, own);
        analysis_.induction = baseAnalysis_.induction;
        analysis_.inductionNote = baseAnalysis_.inductionNote;
        if (baseAnalysis_.induction != model::InductionState::Unmeasurable) {
            analysis_.induction = model::InductionState::Stale;
            analysis_.inductionNote =
                whatIfInductionComing
                    ? tr("these are the model's scores without the what-if, until it is measured "
                         "with the heads switched off")
                    : tr("these are the model's scores without the what-if. Induction is measured "
                         "on the text repeated twice, and this what-if edits layer %1's numbers "
                         "for this text only; heads switched off (by zeros) are measured on the "
                         "what-if")
                          .arg(reference_.layer);
        }
    }
    // A position picked while the work ran, or an undo back to a text whose predictions were
    // for another position.
    predictAtSelectedPosition();
    emit resultsChanged();
}

// ---- Results ----

std::vector<std::pair<int, int>> ModelSession::changedHeads(double threshold) const {
    std::vector<std::pair<int, int>> changed;
    if (!base_ || !current_ || base_ == current_) return changed;
    for (std::size_t l = 0; l < base_->layers.size(); ++l) {
        const auto& before = base_->layers[l].weights;
        const auto& after = current_->layers[l].weights;
        for (std::size_t h = 0; h < before.size() && h < after.size(); ++h) {
            if (before[h].rows() != after[h].rows() || before[h].cols() != after[h].cols() ||
                (before[h] - after[h]).cwiseAbs().maxCoeff() > threshold)
                changed.emplace_back(static_cast<int>(l), static_cast<int>(h));
        }
    }
    return changed;
}

void ModelSession::setSelectedPosition(int position) {
    const int tokens = current_ ? static_cast<int>(current_->tokens.size()) : 0;
    selectedPosition_ = position >= 0 && position < tokens - 1 ? position : -1;
    if (predictAtSelectedPosition()) emit resultsChanged();
}

bool ModelSession::predictAtSelectedPosition() {
    const int tokens = current_ ? static_cast<int>(current_->tokens.size()) : 0;
    if (selectedPosition_ >= tokens - 1) selectedPosition_ = -1;
    if (!current_ || !current_->config.isDecoder() || tokens == 0) return false;
    const int at = selectedPosition_ >= 0 ? selectedPosition_ : tokens - 1;
    const bool whatIf = current_ != base_;
    bool changed = false;
    const model::Model& m = *model();
    if (analysis_.position != at) {
        analysis_.position = at;
        analysis_.predictions = model::topPredictions(m, *current_, at, 10);
        changed = true;
    }
    if (baseAnalysis_.position != at) {
        baseAnalysis_.position = at;
        baseAnalysis_.predictions =
            whatIf ? model::topPredictions(m, *base_, at, 10) : analysis_.predictions;
        changed = true;
    }
    // A "before" only for a what-if: the model's own run has nothing to compare with.
    if (changed)
        analysis_.basePredictions =
            whatIf ? baseAnalysis_.predictions : std::vector<model::Prediction>();
    return changed;
}

int ModelSession::selectedPosition() const {
    return selectedPosition_;
}

}  // namespace ae::ui
