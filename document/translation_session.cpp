#include "document/translation_session.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaObject>
#include <QThread>
#include <QTimer>
#include <utility>

#include "core/model/model_layer_scene.h"
#include "core/model/workbench.h"
#include "core/scene_error.h"
#include "document/attention_document.h"
#include "document/model_layer.h"
#include "document/model_work.h"
#include "io/model/model_folder.h"
#include "io/model/seq2seq_input.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::document {

namespace {

const char* const kDefaultSource = "the red cat sees a big dog";
const char* const kViewKey = "translation";

QJsonArray idArray(const std::vector<long long>& ids) {
    QJsonArray array;
    for (long long id : ids)
        array.append(static_cast<double>(id));
    return array;
}

std::vector<long long> idsOf(const QJsonValue& value) {
    std::vector<long long> ids;
    for (const QJsonValue& id : value.toArray())
        ids.push_back(static_cast<long long>(id.toDouble()));
    return ids;
}

bool sameSource(const Scene& a, const Scene& b) {
    return a.hasSource == b.hasSource &&
           (!a.hasSource || (a.sourceEmbeddings.rows() == b.sourceEmbeddings.rows() &&
                             a.sourceEmbeddings.cols() == b.sourceEmbeddings.cols() &&
                             a.sourceEmbeddings == b.sourceEmbeddings));
}

const model::Model& stackOf(const model::Model& model, model::AttentionKind kind) {
    return kind == model::AttentionKind::EncoderSelf ? model : *model.decoder;
}

}  // namespace

QString attentionKindName(model::AttentionKind kind) {
    switch (kind) {
        case model::AttentionKind::EncoderSelf:
            return QStringLiteral("encoder");
        case model::AttentionKind::DecoderSelf:
            return QStringLiteral("decoder");
        case model::AttentionKind::Cross:
            break;
    }
    return QStringLiteral("cross");
}

std::optional<TranslationLayer> translationLayer(const std::string& viewJson) {
    const QJsonObject view = QJsonDocument::fromJson(QByteArray::fromStdString(viewJson)).object();
    if (!view.value(kViewKey).isObject()) return std::nullopt;
    const QJsonObject o = view.value(kViewKey).toObject();
    TranslationLayer l;
    const QString kind = o.value("attention").toString();
    if (kind == attentionKindName(model::AttentionKind::EncoderSelf)) {
        l.kind = model::AttentionKind::EncoderSelf;
    } else if (kind == attentionKindName(model::AttentionKind::DecoderSelf)) {
        l.kind = model::AttentionKind::DecoderSelf;
    } else if (kind == attentionKindName(model::AttentionKind::Cross)) {
        l.kind = model::AttentionKind::Cross;
    } else {
        return std::nullopt;
    }
    l.model = o.value("model").toString();
    l.layer = o.value("layer").toInt();
    l.head = o.value("head").toInt();
    l.input.source = o.value("source").toString();
    l.input.target = o.value("target").toString();
    l.input.translated = o.value("translated").toBool(true);
    l.input.sourceIds = idsOf(o.value("source_ids"));
    l.input.decoderIds = idsOf(o.value("decoder_ids"));
    return l;
}

std::string withTranslationLayer(const std::string& viewJson, const TranslationLayer& layer) {
    QJsonObject view = QJsonDocument::fromJson(QByteArray::fromStdString(viewJson)).object();
    QJsonObject o;
    o.insert("model", layer.model);
    o.insert("attention", attentionKindName(layer.kind));
    o.insert("layer", layer.layer);
    o.insert("head", layer.head);
    o.insert("source", layer.input.source);
    o.insert("target", layer.input.target);
    o.insert("translated", layer.input.translated);
    o.insert("source_ids", idArray(layer.input.sourceIds));
    o.insert("decoder_ids", idArray(layer.input.decoderIds));
    view.insert(kViewKey, o);
    return QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
}

TranslationSession::TranslationSession(AttentionDocument* document, QObject* parent)
    : QObject(parent),
      document_(document),
      work_(new ModelWork(this)),
      sourceTimer_(new QTimer(this)) {
    sourceTimer_->setSingleShot(true);
    sourceTimer_->setInterval(150);
    connect(sourceTimer_, &QTimer::timeout, this, [this] {
        Input input = input_;
        input.source = pendingSource_;
        input.sourceIds.clear();
        for (int id : sourceTokenizer_->encode(pendingSource_))
            input.sourceIds.push_back(id);
        // A typed target stays, and is run teacher forced on the new source; a translation is
        // made again.
        if (input.translated) input.decoderIds.clear();
        runOn(std::move(input), true);
    });
    connect(work_, &ModelWork::busyChanged, this, &TranslationSession::busyChanged);
    connect(work_, &ModelWork::progressShown, this, &TranslationSession::progressShown);
    connect(work_, &ModelWork::failed, this, [this](const QString& message, bool) {
        translating_ = false;
        fail(message);
    });
    connect(document_, &AttentionDocument::resultsChanged, this,
            &TranslationSession::followDocument);
    connect(document_, &AttentionDocument::structureChanged, this,
            &TranslationSession::followDocument);
    connect(document_, &AttentionDocument::sceneReset, this, &TranslationSession::onSceneReset);
}

TranslationSession::~TranslationSession() {
    if (stopTranslation_) stopTranslation_->store(true);
    work_->stop();
}

const model::Model* TranslationSession::model() const {
    return folder_ ? &folder_->model() : nullptr;
}

QString TranslationSession::folder() const {
    return folder_ ? folder_->directory() : QString();
}

bool TranslationSession::isBusy() const {
    return work_->isBusy();
}

void TranslationSession::setProgressDelay(int milliseconds) {
    work_->setProgressDelay(milliseconds);
}

void TranslationSession::waitUntilIdle() {
    work_->waitWhile([this] { return work_->isBusy() || sourceTimer_->isActive(); });
}

void TranslationSession::fail(const QString& message) {
    problem_ = message;
    emit problem(message);
}

// ---- Opening ----

void TranslationSession::start(std::shared_ptr<io::ModelFolder> folder, const QString& location,
                               const QString& source, int layer, int head) {
    const model::Model& m = folder->model();
    std::shared_ptr<const io::Tokenizer> sourceTokenizer, targetTokenizer;
    try {
        sourceTokenizer =
            std::make_shared<const io::Tokenizer>(io::Tokenizer::load(folder->directory()));
        targetTokenizer =
            std::make_shared<const io::Tokenizer>(io::Tokenizer::loadTarget(folder->directory()));
    } catch (const io::TokenizerError& error) {
        fail(tr("%1: the window translates text, and its tokenizer could not be read (%2); the "
                "command line runs ids: attention-explorer run %1 --ids … --generate N")
                 .arg(folder->directory(), QString::fromStdString(error.what())));
        return;
    }
    close();
    folder_ = std::move(folder);
    location_ = location;
    sourceTokenizer_ = std::move(sourceTokenizer);
    targetTokenizer_ = std::move(targetTokenizer);
    problem_.clear();
    const model::Config& decoder = m.decoder->config;
    TranslationLayer first;
    first.kind = model::AttentionKind::Cross;
    first.layer = layer >= 0 && layer < decoder.layers ? layer : 0;
    first.head = head >= 0 && head < decoder.heads ? head : 0;
    open_ = first;
    Input input;
    input.source = source.isEmpty() ? QString::fromLatin1(kDefaultSource) : source;
    for (int id : sourceTokenizer_->encode(input.source))
        input.sourceIds.push_back(id);
    emit opened();
    emit inputChanged();
    runOn(std::move(input), true);
}

void TranslationSession::close() {
    if (!folder_) return;
    cancel();
    folder_.reset();
    sourceTokenizer_.reset();
    targetTokenizer_.reset();
    base_.reset();
    current_.reset();
    exact_.reset();
    open_.reset();
    pristine_.reset();
    input_ = {};
    emit closed();
}

void TranslationSession::onSceneReset() {
    // Another scene (a file, a preset, a one-stack model, a layer of another model) replaced the
    // layer: the model goes, and the scene stays as a plain scene.
    if (!folder_ || placing_) return;
    const std::optional<TranslationLayer> l = translationLayer(document_->scene().viewJson);
    if (!l || l->model != location_) close();
}

// ---- Input ----

void TranslationSession::setSource(const QString& text) {
    if (!folder_ || (text == input_.source && !sourceTimer_->isActive())) return;
    pendingSource_ = text;
    input_.source = text;
    sourceTimer_->start();
}

void TranslationSession::setTarget(const QString& text) {
    if (!folder_) return;
    if (text.isEmpty()) {
        translate();
        return;
    }
    Input input = input_;
    input.target = text;
    input.translated = false;
    try {
        input.decoderIds = io::teacherForcedDecoderIds(*targetTokenizer_, text, model()->config);
    } catch (const io::TokenizerError& error) {
        fail(QString::fromStdString(error.what()));
        return;
    }
    runOn(std::move(input), true);
}

void TranslationSession::translate() {
    if (!folder_) return;
    Input input = input_;
    input.target.clear();
    input.translated = true;
    input.decoderIds.clear();
    runOn(std::move(input), true);
}

void TranslationSession::cancel() {
    sourceTimer_->stop();
    if (translating_ && stopTranslation_) {
        // The translation stops after its token; the run on what it made follows.
        stopTranslation_->store(true);
        return;
    }
    work_->dropAll();
}

void TranslationSession::runOn(Input input, bool placeLayer) {
    if (stopTranslation_) stopTranslation_->store(true);
    input_ = input;
    emit inputChanged();
    const std::shared_ptr<io::ModelFolder> folder = folder_;
    const bool translating = input.decoderIds.empty();
    auto stop = std::make_shared<std::atomic<bool>>(false);
    stopTranslation_ = stop;
    translating_ = translating;
    const QString what =
        translating ? tr("Translating") : tr("Running %1").arg(folder->directory());
    work_->post(
        ModelWork::Running, what,
        [this, folder, input = std::move(input), stop, placeLayer, translating,
         pause = tokenPauseMs_]() mutable -> std::function<void()> {
            const model::Model& m = folder->model();
            if (translating) {
                input.decoderIds = model::generateGreedy<float>(
                    m, input.sourceIds, kMaxNewTokens, {},
                    [this, stop, pause](const std::vector<long long>& ids) {
                        QMetaObject::invokeMethod(
                            this,
                            [this, stop, ids] {
                                if (stop == stopTranslation_ && !stop->load())
                                    emit translationStep(ids);
                            },
                            Qt::QueuedConnection);
                        if (pause > 0) QThread::msleep(static_cast<unsigned long>(pause));
                        return !stop->load();
                    });
                // The run is on the decoder input, as for a typed target: the end token is what
                // the last row predicts, not an input.
                if (input.decoderIds.size() > 1 && input.decoderIds.back() == m.config.eosToken)
                    input.decoderIds.pop_back();
            }
            auto run = std::make_shared<const Run>(
                model::runEncoderDecoder<float>(m, input.sourceIds, input.decoderIds));
            auto exact = std::make_shared<const model::EncoderDecoderRun<double>>(
                model::runEncoderDecoder<double>(m, input.sourceIds, input.decoderIds));
            return [this, input, run, exact, placeLayer] {
                translating_ = false;
                install(input, run, exact, placeLayer);
            };
        });
}

void TranslationSession::install(const Input& input, std::shared_ptr<const Run> run,
                                 std::shared_ptr<const model::EncoderDecoderRun<double>> exact,
                                 bool placeLayer) {
    input_ = input;
    base_ = run;
    current_ = run;
    exact_ = std::move(exact);
    pristine_.reset();
    problem_.clear();
    emit inputChanged();
    // The open layer on the new input, as one undo step; the same ids again (Translate pressed
    // twice) keep the scene and its what-ifs.
    if (placeLayer && open_ &&
        (open_->input.sourceIds != input.sourceIds ||
         open_->input.decoderIds != input.decoderIds)) {
        const bool first = open_->input.sourceIds.empty() && open_->input.decoderIds.empty();
        placeScene(*open_, tr("Run on the new input"), first);
    }
    emit resultsChanged();
    followDocument();
}

// ---- The layer in the explorer ----

Scene TranslationSession::layerAsModelHasIt(const TranslationLayer& layer) const {
    const model::Model& m = *model();
    const std::vector<std::string> source = labelsOf(input_.sourceIds, false);
    const std::vector<std::string> target = labelsOf(input_.decoderIds, true);
    Scene scene;
    switch (layer.kind) {
        case model::AttentionKind::EncoderSelf:
            scene = model::layerScene(m, exact_->encoder, layer.layer, source);
            break;
        case model::AttentionKind::DecoderSelf:
            scene = model::layerScene(*m.decoder, exact_->decoder, layer.layer, target);
            break;
        case model::AttentionKind::Cross:
            scene = model::crossLayerScene(*m.decoder, exact_->decoder, exact_->encoder,
                                           layer.layer, target, source);
            break;
    }
    TranslationLayer reference = layer;
    reference.model = location_;
    reference.input = input_;
    scene.viewJson = withTranslationLayer(scene.viewJson, reference);
    return scene;
}

void TranslationSession::placeScene(const TranslationLayer& layer, const QString& undoText,
                                    bool reset) {
    if (!exact_) return;
    pristine_ = std::make_shared<const Scene>(layerAsModelHasIt(layer));
    open_ = translationLayer(pristine_->viewJson);
    placing_ = true;
    QString error;
    try {
        if (reset) {
            document_->resetScene(*pristine_);
        } else if (!document_->replaceScene(pristine_, undoText, &error)) {
            fail(error);
        }
    } catch (const SceneError& e) {
        fail(QString::fromStdString(e.what()));
    }
    placing_ = false;
    emit openHeadChanged(layer.layer, layer.head);
}

void TranslationSession::openHead(model::AttentionKind kind, int layer, int head) {
    if (!folder_ || !exact_) return;
    const model::Config& c = stackOf(*model(), kind).config;
    if (layer < 0 || layer >= c.layers || head < 0 || head >= c.heads) return;
    if (open_ && open_->kind == kind && open_->layer == layer && open_->head == head) return;
    TranslationLayer wanted;
    wanted.kind = kind;
    wanted.layer = layer;
    wanted.head = head;
    if (open_ && open_->kind == kind && open_->layer == layer) {
        // The same layer: its what-ifs stay; only the head in the view changes.
        Scene scene = document_->scene();
        TranslationLayer reference = *open_;
        reference.head = head;
        scene.viewJson = withTranslationLayer(scene.viewJson, reference);
        QString error;
        placing_ = true;
        if (!document_->replaceScene(scene, tr("Open head %1.%2").arg(layer).arg(head), &error))
            fail(error);
        placing_ = false;
        open_ = reference;
        emit openHeadChanged(layer, head);
        return;
    }
    placeScene(wanted,
               tr("Open %1 layer %2, head %3").arg(attentionKindName(kind)).arg(layer).arg(head),
               false);
}

void TranslationSession::followDocument() {
    if (!folder_ || placing_ || !base_) return;
    std::optional<TranslationLayer> l = translationLayer(document_->scene().viewJson);
    if (l && l->model != location_) l.reset();
    if (!l) {
        // Not a layer of this model: the model's own run is shown.
        if (open_) {
            open_.reset();
            pristine_.reset();
            emit openHeadChanged(-1, -1);
        }
        if (current_ != base_) {
            current_ = base_;
            emit resultsChanged();
        }
        return;
    }
    if (l->input.sourceIds != base_->encoder.tokens ||
        l->input.decoderIds != base_->decoder.tokens) {
        // Undo or redo brought a layer made on another input back: that input runs again,
        // teacher forced on the decoder ids it had.
        if (work_->isPending(ModelWork::Running) && input_.sourceIds == l->input.sourceIds &&
            input_.decoderIds == l->input.decoderIds)
            return;
        open_ = l;
        runOn(l->input, false);
        return;
    }
    const bool otherLayer = !open_ || open_->kind != l->kind || open_->layer != l->layer;
    if (otherLayer || !pristine_) pristine_ = std::make_shared<const Scene>(layerAsModelHasIt(*l));
    const bool otherHead = !open_ || open_->head != l->head || otherLayer;
    open_ = l;
    if (otherHead) emit openHeadChanged(l->layer, l->head);
    const ComputeScheduler& scheduler = document_->scheduler();
    if (!scheduler.hasLatestResults()) return;  // resultsChanged brings us back
    const Scene& scene = document_->scene();
    const auto showBase = [this] {
        if (!work_->isPending(ModelWork::Running) && current_ != base_) {
            current_ = base_;
            emit resultsChanged();
        }
    };
    if (sameLayer(scene, *pristine_, document_->hasWeightsOf(pristine_)) &&
        sameSource(scene, *pristine_)) {
        showBase();
        return;
    }
    if (!scheduler.errorText().isEmpty()) {
        fail(tr("The layer does not compute (%1); the model is shown as it is")
                 .arg(scheduler.errorText()));
        showBase();
        return;
    }
    const model::Model& m = *model();
    const model::Config& stack = stackOf(m, l->kind).config;
    const std::string shapeProblem =
        l->kind == model::AttentionKind::Cross
            ? model::crossWhatIfShapeProblem(scene, stack,
                                             static_cast<int>(base_->decoder.tokens.size()),
                                             static_cast<int>(base_->encoder.tokens.size()))
            : model::whatIfShapeProblem(
                  scene, stack,
                  static_cast<int>((l->kind == model::AttentionKind::EncoderSelf
                                        ? base_->encoder.tokens
                                        : base_->decoder.tokens)
                                       .size()));
    if (!shapeProblem.empty()) {
        fail(tr("The what-if cannot flow forward: %1; the model is shown as it is")
                 .arg(QString::fromStdString(shapeProblem)));
        showBase();
        return;
    }
    // The engine's results, copied here: the worker must not read the engine the GUI shows.
    auto edited = std::make_shared<model::EditedLayer<float>>(
        model::editedLayer(scene, document_->engine(), l->layer, stack.kvHeads));
    const std::shared_ptr<io::ModelFolder> folder = folder_;
    const std::shared_ptr<const Run> base = base_;
    const model::AttentionKind kind = l->kind;
    const int layer = l->layer;
    work_->post(ModelWork::Running,
                tr("Recomputing after %1 layer %2").arg(attentionKindName(kind)).arg(layer),
                [this, folder, base, edited, kind, layer]() -> std::function<void()> {
                    auto result = std::make_shared<const Run>(model::resumeEncoderDecoder<float>(
                        folder->model(), *base, kind, layer, std::move(edited->record),
                        edited->attentionOut));
                    return [this, result, base] {
                        if (base != base_) return;
                        current_ = result;
                        emit resultsChanged();
                    };
                });
}

// ---- Results ----

std::vector<std::string> TranslationSession::labelsOf(const std::vector<long long>& ids,
                                                      bool target) const {
    const io::Tokenizer* tokenizer = target ? targetTokenizer_.get() : sourceTokenizer_.get();
    std::vector<std::string> labels;
    for (long long id : ids) {
        const QString text = tokenizer ? tokenizer->displayText(static_cast<int>(id)) : QString();
        labels.push_back((text.isEmpty() ? QStringLiteral("#%1").arg(id) : text).toStdString());
    }
    return labels;
}

QStringList TranslationSession::sourceLabels() const {
    QStringList labels;
    for (const std::string& label : labelsOf(input_.sourceIds, false))
        labels << QString::fromStdString(label);
    return labels;
}

QStringList TranslationSession::targetLabels() const {
    QStringList labels;
    for (const std::string& label : labelsOf(input_.decoderIds, true))
        labels << QString::fromStdString(label);
    return labels;
}

QString TranslationSession::targetTokenText(long long id) const {
    return QString::fromStdString(labelsOf({id}, true).front());
}

QString TranslationSession::translationText() const {
    if (!targetTokenizer_ || input_.decoderIds.size() < 2) return {};
    std::vector<int> ids(input_.decoderIds.begin() + 1, input_.decoderIds.end());
    const model::Model* m = model();
    if (m && !ids.empty() && ids.back() == m->config.eosToken) ids.pop_back();
    return targetTokenizer_->decode(ids).trimmed();
}

std::vector<model::Prediction> TranslationSession::predictions(int count) const {
    if (!current_ || current_->decoder.tokens.empty()) return {};
    return model::topPredictions(current_->decoder,
                                 static_cast<int>(current_->decoder.tokens.size()) - 1, count);
}

std::vector<model::Prediction> TranslationSession::basePredictions(int count) const {
    if (!showsWhatIf() || base_->decoder.tokens.empty()) return {};
    return model::topPredictions(base_->decoder, static_cast<int>(base_->decoder.tokens.size()) - 1,
                                 count);
}

std::vector<model::HeadSummary> TranslationSession::summaries(model::AttentionKind kind) const {
    if (!current_) return {};
    switch (kind) {
        case model::AttentionKind::EncoderSelf:
            return model::summarizeHeads(current_->encoder);
        case model::AttentionKind::DecoderSelf:
            return model::summarizeHeads(current_->decoder);
        case model::AttentionKind::Cross:
            break;
    }
    std::vector<int> separators;
    if (model()) {
        for (std::size_t i = 0; i < current_->encoder.tokens.size(); ++i)
            if (current_->encoder.tokens[i] == model()->config.eosToken)
                separators.push_back(static_cast<int>(i));
    }
    return model::summarizeCrossHeads(*model()->decoder, current_->decoder, separators);
}

}  // namespace ae::document
