#include "document/model_session.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QTimer>
#include <algorithm>
#include <utility>

#include "core/model/what_if.h"
#include "core/scene_error.h"
#include "document/attention_document.h"
#include "document/model_layer.h"
#include "io/model/model_folder.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::document {

ModelSession::ModelSession(AttentionDocument* document, QObject* parent)
    : QObject(parent),
      document_(document),
      work_(new ModelWork(this)),
      runs_(new ModelRuns(work_, this)),
      textTimer_(new QTimer(this)) {
    textTimer_->setSingleShot(true);
    textTimer_->setInterval(150);
    connect(textTimer_, &QTimer::timeout, this, [this] {
        if (!model_.tokenizer) {
            fail(tr("%1: no tokenizer in this folder: type ids instead").arg(folder()));
            return;
        }
        ModelInput input;
        input.text = pendingText_;
        if (pendingPair_.isEmpty()) {
            const std::vector<int> encoded = model_.tokenizer->encode(pendingText_);
            input.ids.assign(encoded.begin(), encoded.end());
        } else {
            io::Tokenizer::Encoded pair;
            try {
                pair = model_.tokenizer->encodePair(pendingText_, pendingPair_);
            } catch (const io::TokenizerError& e) {
                fail(QString::fromStdString(e.what()));
                return;
            }
            input.ids.assign(pair.ids.begin(), pair.ids.end());
            input.textPair = pendingPair_;
            input.pairStart = pair.secondStart;
            // A family without a token-type table takes the pair's ids alone.
            if (model_.model()->config.architecture().tokenTypes) input.tokenTypes = pair.typeIds;
        }
        if (input_.attentionMask.size() == input.ids.size())
            input.attentionMask = input_.attentionMask;
        startInput(std::move(input));
    });
    connect(work_, &ModelWork::busyChanged, this, &ModelSession::busyChanged);
    connect(work_, &ModelWork::progressShown, this, &ModelSession::progressShown);
    connect(work_, &ModelWork::failed, this, [this](const QString& message, bool opening) {
        opening ? refuse(message) : fail(message);
    });
    connect(runs_, &ModelRuns::resultsChanged, this, &ModelSession::resultsChanged);
    // A new run shown: its value-weighted maps follow, when they are asked for.
    connect(runs_, &ModelRuns::resultsChanged, this, &ModelSession::weighCurrentRun);
    connect(document_, &AttentionDocument::sceneReset, this, &ModelSession::onSceneReset);
    connect(document_, &AttentionDocument::structureChanged, this, [this] {
        // An undo, a redo or another structural edit of the document while a typed input was
        // still running: the document wins, the typed input's run is dropped.
        if (inputJob_) {
            inputJob_ = false;
            work_->drop(ModelWork::Running);
        }
        followDocument();
    });
    connect(document_, &AttentionDocument::resultsChanged, this, &ModelSession::followDocument);
}

ModelSession::~ModelSession() {
    work_->stop();
}

// ---- Work on the worker thread ----

void ModelSession::cancel() {
    // A pass under way stops at its next layer; its result would be dropped anyway.
    if (stopRun_) stopRun_->store(true);
    if (stopOpening_) stopOpening_->store(true);
    inputJob_ = false;
    textTimer_->stop();
    work_->dropAll();
    // The input shown goes back to what the document holds.
    if (layerOpen_ && input_ != reference_.input()) {
        input_ = reference_.input();
        emit inputChanged();
    }
}

void ModelSession::waitUntilIdle(bool followUpsToo) {
    work_->waitWhile([this, followUpsToo] {
        return work_->isBusy() || textTimer_->isActive() ||
               (followUpsToo &&
                (work_->isPending(ModelWork::Induction) || work_->isPending(ModelWork::Weighing)));
    });
}

void ModelSession::measureInduction() {
    if (const std::optional<QString> whyNot = runs_->measureInduction())
        emit problem(tr("Induction not measured: %1").arg(*whyNot));
}

void ModelSession::fail(const QString& message) {
    problem_ = message;
    emit problem(message);
}

void ModelSession::refuse(const QString& message) {
    fail(message);
    emit openRefused(message);
}

// ---- Opening ----

void ModelSession::open(const QString& location, const QString& text, std::vector<long long> ids) {
    startOpening(
        userOpenRequest(location, text, std::move(ids)), [this](const OpenedModel& opened) {
            const Scene scene =
                model_.layerScene(*opened.run.run, opened.layer,
                                  model_.referenceFor(opened.input, opened.layer, opened.head));
            try {
                document_->resetScene(scene);
            } catch (const SceneError& error) {
                fail(QString::fromStdString(error.what()));
            }
        });
}

void ModelSession::startOpening(OpenRequest request,
                                std::function<void(const OpenedModel&)> whenOpen) {
    const QString refusal = checkOpenRequest(request);
    if (!refusal.isEmpty()) {
        refuse(refusal);
        return;
    }
    if (request.forSavedScene()) close();
    const int position = runs_->selectedPosition();
    const QString name = QFileInfo(request.model.folder).fileName();
    const PassReports report = startPass(stopOpening_);
    request.mapBudget = mapBudget_;
    work_->post(ModelWork::Opening, tr("Opening %1").arg(name),
                [this, request = std::move(request), position, whenOpen,
                 report]() -> std::function<void()> {
                    auto opened =
                        std::make_shared<const OpenedModel>(openModel(request, position, report));
                    return [this, opened, whenOpen] {
                        if (opened->encoderDecoder) {
                            const LoadedModel& m = opened->model;
                            emit encoderDecoderOpened(m.folder, m.location(), opened->input.text,
                                                      opened->layer, opened->head);
                            return;
                        }
                        install(*opened);
                        whenOpen(*opened);
                    };
                });
}

void ModelSession::install(const OpenedModel& loaded) {
    work_->drop(ModelWork::Running);  // runs of the model open before
    inputJob_ = false;
    model_ = loaded.model;
    runs_->startModel(model_.folder, model_.special);
    installBase(loaded.run.run, loaded.input, loaded.run.analysis);
    input_ = loaded.input;
    problem_.clear();
    emit opened();
    emit inputChanged();
}

void ModelSession::close() {
    if (!model_.folder) return;
    work_->drop(ModelWork::Running);
    inputJob_ = false;
    model_ = {};
    runs_->clear();
    layerOpen_ = false;
    whatIfLayer_ = -1;
    whatIfHeadsOff_.clear();
    pristine_.reset();
    emit closed();
}

void ModelSession::onSceneReset() {
    const std::optional<ModelReference> r = modelReference(document_->scene().viewJson);
    if (!r) {
        close();
        return;
    }
    if (model_.isReferredToBy(*r)) {
        followDocument();
        return;
    }
    // A scene file (or a restored autosave) made on a model: open it, but only if it is still
    // the model the scene was made on.
    close();
    startOpening({*r, tr("the saved layer is shown as a plain scene"), {}},
                 [this](const OpenedModel&) { followDocument(); });
}

void ModelSession::openSavedLayer(const QByteArray& json, const QString& fileName, bool unsaved) {
    QString refusal;
    std::optional<OpenRequest> request = savedLayerRequest(json, fileName, &refusal);
    if (!request) {
        refuse(refusal);
        return;
    }
    const QString named = fileName.isEmpty() ? tr("The restored scene") : fileName;
    const ModelReference r = request->model;
    startOpening(
        std::move(*request), [this, json, fileName, unsaved, named, r](const OpenedModel& opened) {
            // The file holds the what-ifs; the layer as the model has it holds everything else.
            try {
                const Scene scene =
                    savedLayerScene(json, fileName, model_.layerScene(*opened.run.run, r.layer, r));
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

std::shared_ptr<const Scene> ModelSession::modelLayerOf(const Scene& scene) const {
    const std::optional<ModelReference> r = modelReference(scene.viewJson);
    if (!r || !runs_->base() || !model_.isReferredToBy(*r)) return nullptr;
    if (r->input() != runs_->baseInput()) return nullptr;
    if (r->layer < 0 || r->layer >= runs_->base()->config.layers) return nullptr;
    // The layer as the model has it for the base input is made once when it opens (pristine_):
    // saving, which autosave does every few seconds, must not make it again on this thread (an
    // 8B model's layer at L = 2048 is seconds of conversion and products), nor copy it.
    if (pristine_ && pristineLayer_ == r->layer) return pristine_;
    return std::make_shared<const Scene>(layerAsModelHasIt(r->layer, r->head));
}

// ---- Input ----

void ModelSession::setText(const QString& text) {
    if (!model_.folder) return;
    pendingText_ = text;
    pendingPair_ = input_.textPair;
    textTimer_->start();
}

void ModelSession::setTextPair(const QString& text, const QString& second) {
    if (!model_.folder) return;
    pendingText_ = text;
    pendingPair_ = second;
    textTimer_->start();
}

void ModelSession::setIds(const std::vector<long long>& ids,
                          const std::vector<int>& attentionMask) {
    if (!model_.folder) return;
    textTimer_->stop();
    startInput({QString(), ids, attentionMask});
}

void ModelSession::setPadding(int position, bool padding) {
    if (!model_.folder || position < 0 || position >= static_cast<int>(input_.ids.size())) return;
    std::vector<int> mask = input_.attentionMask;
    if (mask.size() != input_.ids.size()) mask.assign(input_.ids.size(), 1);
    mask[static_cast<std::size_t>(position)] = padding ? 0 : 1;
    if (std::all_of(mask.begin(), mask.end(), [](int m) { return m == 1; })) mask.clear();
    ModelInput padded = input_;
    padded.attentionMask = mask;
    startInput(std::move(padded));
}

void ModelSession::startInput(const ModelInput& input) {
    if (layerOpen_ && input == runs_->baseInput() && reference_.input() == input) return;
    try {
        if (input.ids.empty()) throw model::ModelError("ids: no tokens");
        model::checkInputs(model()->config, input.ids,
                           windowRunOptions(*model(), input, mapBudget_));
    } catch (const model::ModelError& error) {
        fail(QString::fromStdString(error.what()));
        return;
    }
    const ModelInput before = input_;
    input_ = input;
    emit inputChanged();
    inputJob_ = true;
    const QString description = input.text != before.text ? tr("Change text")
                                : input.ids != before.ids ? tr("Change ids")
                                                          : tr("Change padding");
    // The rows before the first changed token are the last run's (a decoder's earlier rows never
    // see a later token): typing at the end reruns the new tokens only.
    runModelOn(input, runs_->base(), [this, input, description](const AnalysedRun& result) {
        inputJob_ = false;
        const int layer = layerOpen_ ? reference_.layer : 0;
        const int head = layerOpen_ ? reference_.head : 0;
        // The layer as the model has it for the last text has the same weights: copied, they
        // need no conversion from the file.
        const std::shared_ptr<const Scene> sameLayer =
            pristine_ && pristineLayer_ == layer ? pristine_ : nullptr;
        installBase(result.run, input, result.analysis);
        // The new scene is also the layer as the model has it, which following the document
        // compares against: made once, shared.
        pristine_ = std::make_shared<const Scene>(model_.layerScene(
            *result.run, layer, model_.referenceFor(input, layer, head), sameLayer.get()));
        pristineLayer_ = layer;
        QString error;
        if (!document_->replaceScene(pristine_, description, &error)) fail(error);
    });
}

void ModelSession::runModelOn(const ModelInput& input, std::shared_ptr<const Run> previous,
                              std::function<void(const AnalysedRun&)> then) {
    std::shared_ptr<io::ModelFolder> folder = model_.folder;
    const int position = runs_->selectedPosition();
    const SpecialTokenIds special = runs_->special();
    const PassReports reports = startPass(stopRun_);
    const double budget = mapBudget_;
    work_->post(
        ModelWork::Running, tr("Running the model"),
        [folder, input, previous, position, special, then, reports,
         budget]() -> std::function<void()> {
            auto result = std::make_shared<const AnalysedRun>(runAndAnalyse(
                folder->model(), input, position, budget, previous.get(), reports, special));
            return [result, then] { then(*result); };
        });
}

model::Matrix<float> ModelSession::headWeights(const Run& run, int layer, int head) const {
    const model::LayerRecord<float>& record = run.layers.at(static_cast<std::size_t>(layer));
    if (record.hasMaps()) return record.weights.at(static_cast<std::size_t>(head));
    return model::recomputedLayerMaps(*model(), run, layer)
        .weights.at(static_cast<std::size_t>(head));
}

PassReports ModelSession::startPass(std::shared_ptr<std::atomic<bool>>& stopFlag) {
    // The pass before this one (of the same kind) is stale now: it stops at its next layer
    // instead of finishing.
    if (stopFlag) stopFlag->store(true);
    // So is the induction pass on the text before, which runs on the same worker: a new text
    // would otherwise wait for it (minutes on a big model).
    runs_->stopInduction();
    auto stop = std::make_shared<std::atomic<bool>>(false);
    stopFlag = stop;
    // On the worker: each finished layer is reported to this thread (the session outlives its
    // jobs: the worker stops first), and a set flag stops the pass.
    PassReports reports;
    reports.afterLayer = [this, stop](int done, int layers) {
        QMetaObject::invokeMethod(
            this,
            [this, stop, done, layers] {
                if (!stop->load()) emit layerProgress(done, layers);
            },
            Qt::QueuedConnection);
        return !stop->load();
    };
    // The heads' part only (summaries and pooled maps: kilobytes), not the T x T sum.
    reports.digestReady = [this, stop](int layer, int layers, const model::LayerDigest& digest) {
        auto heads = std::make_shared<const std::vector<model::HeadDigest>>(digest.heads);
        const int tokens = static_cast<int>(digest.weightSum.rows());
        QMetaObject::invokeMethod(
            this,
            [this, stop, layer, layers, tokens, heads] {
                if (!stop->load()) emit layerDigestReady(layer, layers, tokens, *heads);
            },
            Qt::QueuedConnection);
    };
    reports.starting = [this, stop](int layers, int heads, int tokens) {
        QMetaObject::invokeMethod(
            this,
            [this, stop, layers, heads, tokens] {
                if (!stop->load()) emit passStarting(layers, heads, tokens);
            },
            Qt::QueuedConnection);
    };
    // Reported in whole percents: thousands of small tensors need not be thousands of events.
    auto lastPercent = std::make_shared<std::atomic<int>>(-1);
    reports.checking = [this, stop, lastPercent](double fraction) {
        const int percent = static_cast<int>(fraction * 100);
        if (lastPercent->exchange(percent) != percent) {
            QMetaObject::invokeMethod(
                this,
                [this, stop, fraction] {
                    if (!stop->load()) emit valuesChecking(fraction);
                },
                Qt::QueuedConnection);
        }
        return !stop->load();
    };
    return reports;
}

void ModelSession::installBase(std::shared_ptr<const Run> run, const ModelInput& input,
                               const RunAnalysis& analysis) {
    pristine_.reset();
    runs_->installBase(std::move(run), input, analysis);
}

// ---- The open layer ----

Scene ModelSession::layerAsModelHasIt(int layer, int head) const {
    return model_.layerScene(*runs_->base(), layer,
                             model_.referenceFor(runs_->baseInput(), layer, head));
}

void ModelSession::setValueWeighted(bool on) {
    if (on == valueWeighted_) return;
    valueWeighted_ = on;
    weighCurrentRun();
    emit resultsChanged();
}

void ModelSession::weighCurrentRun() {
    const std::shared_ptr<const Run> run = runs_->current();
    if (!run || !model_.folder || weighedRun_ == run) return;
    // A run that kept its maps is weighed anyway, for the sink column (cheap: a product with W_O
    // a head); one that dropped them only when asked (every layer's maps recomputed).
    if (!valueWeighted_ && document::keepsOnlyDigests(*run)) return;
    std::shared_ptr<io::ModelFolder> folder = model_.folder;
    work_->post(ModelWork::Weighing, tr("Weighing the values"), [this, folder, run] {
        auto digests = std::make_shared<const std::vector<model::LayerDigest>>(
            document::valueWeightedDigests(folder->model(), *run));
        return std::function<void()>([this, run, digests] {
            weighedRun_ = run;
            weighed_ = digests;
            emit resultsChanged();
        });
    });
}

std::vector<double> ModelSession::sinkNorms() const {
    std::vector<double> sinks;
    if (const auto digests = weighedDigests())
        for (const model::LayerDigest& layer : *digests)
            for (const model::HeadDigest& head : layer.heads)
                sinks.push_back(head.summary.firstToken);
    return sinks;
}

void ModelSession::openHead(int layer, int head) {
    if (!model_.folder || !runs_->base()) return;
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
    pristine_ = std::make_shared<const Scene>(layerAsModelHasIt(layer, head));
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
    layerOpen_ = r && model_.isReferredToBy(*r);
    if (!layerOpen_) {
        whatIfLayer_ = -1;
        whatIfHeadsOff_.clear();
        if (wasOpen) emit openHeadChanged(-1, -1);
        if (runs_->current() != runs_->base()) runs_->showBase();
        return;
    }
    if (inputJob_) return;  // the document follows once the typed input has run
    reference_ = *r;
    const ModelInput held = r->input();
    if (input_ != held) {
        input_ = held;
        emit inputChanged();
    }
    if (!wasOpen || oldLayer != r->layer || oldHead != r->head)
        emit openHeadChanged(r->layer, r->head);
    if (runs_->baseInput() != held) {
        if (runs_->takePrevious(held)) {
            pristine_.reset();
        } else {
            // An undo back to an input this session no longer holds: run it again (the same
            // ids give the same numbers).
            runModelOn(held, nullptr, [this, held](const AnalysedRun& result) {
                installBase(result.run, held, result.analysis);
                followDocument();
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
    const std::shared_ptr<const Run> base = runs_->base();
    if (!pristine_ || pristineLayer_ != layer) {
        pristine_ = std::make_shared<const Scene>(layerAsModelHasIt(layer, reference_.head));
        pristineLayer_ = layer;
    }
    const LayerEdit edit = judgeLayerEdit(scene, *pristine_, document_->hasWeightsOf(pristine_),
                                          scheduler.errorText(), *base);
    whatIfLayer_ = edit.kind == LayerEdit::WhatIf ? layer : -1;
    whatIfHeadsOff_ = edit.kind == LayerEdit::WhatIf ? edit.headsOff : std::vector<int>();
    if (edit.kind != LayerEdit::WhatIf) {
        if (!edit.problem.isEmpty()) fail(edit.problem);
        // The model's own run is shown: a what-if still on the worker (an undo pressed twice
        // quickly) would replace it when it comes. A typed input's run stays: it brings another
        // layer.
        if (!inputJob_) work_->drop(ModelWork::Running);
        if (runs_->current() != base || runs_->analysis().summaries.empty() ||
            edit.kind == LayerEdit::Refused)
            runs_->showBase();
        return;
    }
    // The engine's results, copied here: the worker must not read the engine the GUI shows.
    auto edited = std::make_shared<model::EditedLayer<float>>(
        model::editedLayer(scene, document_->engine(), layer, base->config.kvHeads));
    std::shared_ptr<io::ModelFolder> folder = model_.folder;
    const int position = runs_->selectedPosition();
    const long long maskToken = runs_->special().mask;
    const RunAnalysis baseAnalysis = runs_->baseAnalysis();
    work_->post(
        ModelWork::Running,
        tr("Recomputing layers %1 to %2").arg(layer).arg(base->config.layers - 1),
        [this, folder, base, edited, layer, position, maskToken, baseAnalysis,
         headsOff = edit.headsOff]() -> std::function<void()> {
            auto result = std::make_shared<const AnalysedRun>(resumeAndAnalyse(
                folder->model(), *base, baseAnalysis, std::move(*edited), position, maskToken));
            return [this, result, layer, headsOff] {
                const bool inductionComing =
                    runs_->measureWhatIfInduction(result->run, layer, headsOff);
                runs_->show(result->run, result->analysis, inductionComing, layer);
            };
        });
}

}  // namespace ae::document
