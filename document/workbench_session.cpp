#include "document/workbench_session.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaObject>
#include <QPointer>
#include <QRegularExpression>

#include "core/model/edited_model.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/model/model_folder.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::document {

namespace {

const QLatin1String kWorkbenchKey("workbench");

model::Analysis analysisOf(WorkbenchMode mode) {
    switch (mode) {
        case WorkbenchMode::Patching:
            return model::Analysis::Patching;
        case WorkbenchMode::Lens:
            return model::Analysis::Lens;
        case WorkbenchMode::Attribution:
            return model::Analysis::Attribution;
        case WorkbenchMode::Composition:
            return model::Analysis::Composition;
    }
    return model::Analysis::Patching;
}

QJsonObject viewObject(const std::string& viewJson) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(viewJson)).object();
}

}  // namespace

QString workbenchModeKey(WorkbenchMode mode) {
    return QLatin1String(model::analysisName(analysisOf(mode)));
}

std::optional<WorkbenchMode> workbenchModeFromKey(const QString& key) {
    for (WorkbenchMode mode : {WorkbenchMode::Patching, WorkbenchMode::Lens,
                               WorkbenchMode::Attribution, WorkbenchMode::Composition})
        if (workbenchModeKey(mode) == key) return mode;
    return std::nullopt;
}

std::optional<WorkbenchSettings> workbenchSettings(const std::string& viewJson) {
    const QJsonValue value = viewObject(viewJson).value(kWorkbenchKey);
    if (!value.isObject()) return std::nullopt;
    const QJsonObject o = value.toObject();
    WorkbenchSettings s;
    if (const auto mode = workbenchModeFromKey(o.value(QLatin1String("mode")).toString()))
        s.mode = *mode;
    s.corrupted = o.value(QLatin1String("corrupted")).toString();
    s.target = o.value(QLatin1String("target")).toString();
    s.foil = o.value(QLatin1String("foil")).toString();
    const QJsonValue position = o.value(QLatin1String("position"));
    if (position.isDouble() && position.toDouble() == position.toInt() && position.toInt() >= -1)
        s.position = position.toInt();
    const QString composition = o.value(QLatin1String("composition")).toString();
    if (composition == QLatin1String("q") || composition == QLatin1String("k") ||
        composition == QLatin1String("v"))
        s.composition = composition.front().toLatin1();
    s.lensLogitDifference =
        o.value(QLatin1String("lens_curve")).toString() == QLatin1String("logit_difference");
    return s;
}

std::string withWorkbenchSettings(const std::string& viewJson, const WorkbenchSettings& s) {
    QJsonObject view = viewObject(viewJson);
    QJsonObject o;
    o[QLatin1String("mode")] = workbenchModeKey(s.mode);
    o[QLatin1String("corrupted")] = s.corrupted;
    o[QLatin1String("target")] = s.target;
    o[QLatin1String("foil")] = s.foil;
    o[QLatin1String("position")] = s.position;
    o[QLatin1String("composition")] = QString(QLatin1Char(s.composition));
    o[QLatin1String("lens_curve")] =
        s.lensLogitDifference ? QStringLiteral("logit_difference") : QStringLiteral("probability");
    view[kWorkbenchKey] = o;
    return QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
}

WorkbenchSession::WorkbenchSession(ModelSession* session, QObject* parent)
    : QObject(parent), session_(session) {
    AttentionDocument* document = session_->document();
    connect(document, &AttentionDocument::resultsChanged, this, &WorkbenchSession::followDocument);
    connect(document, &AttentionDocument::sceneReset, this, &WorkbenchSession::followDocument);
    followDocument();
}

WorkbenchSession::~WorkbenchSession() {
    cancel();
    join();
}

void WorkbenchSession::join() {
    if (worker_.joinable()) worker_.join();
}

void WorkbenchSession::cancel() {
    if (cancel_) cancel_->store(true);
}

void WorkbenchSession::followDocument() {
    const std::optional<WorkbenchSettings> held =
        workbenchSettings(session_->document()->scene().viewJson);
    if (!held || *held == committed_) return;
    committed_ = *held;
    settings_ = *held;
    emit settingsChanged();
}

void WorkbenchSession::commitSettings(const QString& description) {
    if (settings_ == committed_ || session_->layer() < 0) return;
    AttentionDocument* document = session_->document();
    Scene scene = document->scene();
    scene.viewJson = withWorkbenchSettings(scene.viewJson, settings_);
    committed_ = settings_;
    QString error;
    if (!document->replaceScene(scene, description, &error)) emit problem(error);
}

long long WorkbenchSession::tokenId(const QString& token, const char* what,
                                    QString* problem) const {
    const model::Model* model = session_->model();
    const io::Tokenizer* tokenizer = session_->tokenizer();
    bool number = false;
    long long id = -1;
    if (token.startsWith('#')) {
        id = token.mid(1).toLongLong(&number);
    } else if (!tokenizer) {
        id = token.trimmed().toLongLong(&number);
    }
    if (!number && tokenizer) {
        std::vector<int> ids;
        try {
            ids = tokenizer->encode(token, false);
        } catch (const std::exception& e) {
            *problem = QString::fromStdString(e.what());
            return -1;
        }
        if (ids.size() == 1) {
            id = ids.front();
            number = true;
        } else {
            *problem = tr("The %1 \"%2\" is %3 tokens, not one: pick it from the predictions or "
                          "type #id")
                           .arg(QLatin1String(what), token)
                           .arg(ids.size());
            return -1;
        }
    }
    if (!number || id < 0 || (model && id >= model->config.vocab)) {
        *problem = tr("The %1 \"%2\" is not a token id in [0, %3)")
                       .arg(QLatin1String(what), token)
                       .arg(model ? model->config.vocab : 0);
        return -1;
    }
    return id;
}

std::vector<long long> WorkbenchSession::corruptedIds(QString* problem) const {
    if (!session_->model()) {
        *problem = tr("Open a model first");
        return {};
    }
    if (settings_.corrupted.trimmed().isEmpty()) {
        *problem = tr("Type the corrupted prompt: the model's text with a few tokens changed");
        return {};
    }
    if (const io::Tokenizer* tokenizer = session_->tokenizer()) {
        try {
            const std::vector<int> ids = tokenizer->encode(settings_.corrupted, true);
            return {ids.begin(), ids.end()};
        } catch (const std::exception& e) {
            *problem = QString::fromStdString(e.what());
            return {};
        }
    }
    std::vector<long long> ids;
    for (const QString& part : settings_.corrupted.split(
             QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts)) {
        bool ok = false;
        const long long id = part.toLongLong(&ok);
        if (!ok) {
            *problem = tr("This folder has no tokenizer: type the corrupted prompt as ids, "
                          "e.g. 7 41 3 (\"%1\" is not an id)")
                           .arg(part);
            return {};
        }
        ids.push_back(id);
    }
    return ids;
}

std::vector<int> WorkbenchSession::changedPositions() const {
    QString problem;
    const std::vector<long long> corrupt = corruptedIds(&problem);
    const std::vector<long long>& clean = session_->ids();
    std::vector<int> changed;
    if (corrupt.size() != clean.size()) return changed;
    for (std::size_t i = 0; i < clean.size(); ++i)
        if (clean[i] != corrupt[i]) changed.push_back(static_cast<int>(i));
    return changed;
}

WorkbenchSession::CarriedWhatIf WorkbenchSession::carriedWhatIf(bool withScenes) const {
    CarriedWhatIf carried;
    carried.layer = session_->whatIfLayer();
    const std::shared_ptr<const io::ModelFolder> folder = session_->folderHandle();
    const std::shared_ptr<const Scene> pristine = session_->whatIfPristine();
    if (carried.layer < 0 || !folder || !pristine) return carried;
    const Scene& scene = session_->document()->scene();
    carried.outside = model::editOutsideWeights(scene, *pristine, folder->model().config);
    if (!carried.outside.empty()) return carried;
    if (!scene.ablation.byMean)
        for (int head : scene.ablation.heads)
            carried.headsOff.push_back({carried.layer, head});
    carried.weights = model::editedWeightNames(scene, *pristine);
    if (withScenes && !carried.weights.empty()) {
        carried.scene = std::make_shared<const Scene>(scene);
        carried.pristine = pristine;
    }
    return carried;
}

QString WorkbenchSession::editedModelNote() const {
    return noteOf(carriedWhatIf(false));
}

QString WorkbenchSession::noteOf(const CarriedWhatIf& carried) {
    if (carried.layer < 0) return {};
    if (!carried.outside.empty())
        return tr("The what-if in layer %1 changes %2, which the model's weights do not hold: "
                  "the workbench shows the model without it")
            .arg(carried.layer)
            .arg(QString::fromStdString(carried.outside));
    QStringList parts;
    if (!carried.weights.empty()) {
        QStringList weights;
        for (const std::string& w : carried.weights)
            weights << QString::fromStdString(w);
        parts << tr("%1 of layer %2 edited")
                     .arg(weights.join(QStringLiteral(", ")))
                     .arg(carried.layer);
    }
    if (!carried.headsOff.empty()) {
        QStringList names;
        for (const model::HeadAblation& off : carried.headsOff)
            names << QStringLiteral("L%1 H%2").arg(off.layer).arg(off.head);
        parts << tr("%1 switched off").arg(names.join(QStringLiteral(", ")));
    }
    if (parts.isEmpty()) return {};
    return tr("Edited model: %1").arg(parts.join(QStringLiteral("; ")));
}

void WorkbenchSession::run() {
    cancel();
    join();
    const WorkbenchSettings s = settings_;
    const std::shared_ptr<const io::ModelFolder> folder = session_->folderHandle();
    if (!folder) {
        emit problem(tr("Open a model first"));
        return;
    }
    auto job = std::make_shared<WorkbenchResult>();
    job->mode = s.mode;
    job->cleanIds = session_->ids();
    const CarriedWhatIf carried = carriedWhatIf(true);
    job->edited = noteOf(carried);
    const long long T = static_cast<long long>(job->cleanIds.size());
    QString why;
    try {
        model::requireAnalysis(folder->model().config, analysisOf(s.mode));
    } catch (const model::ModelError& e) {
        why = QString::fromStdString(e.what());
    }
    const bool readsText = s.mode != WorkbenchMode::Composition;
    if (why.isEmpty() && readsText && T == 0) why = tr("Type a text first");
    if (why.isEmpty() && readsText && s.position >= T)
        why = tr("Position %1 is past the text's %2 tokens").arg(s.position).arg(T);
    if (why.isEmpty() && s.mode == WorkbenchMode::Patching) {
        job->corruptIds = corruptedIds(&why);
        if (why.isEmpty() && static_cast<long long>(job->corruptIds.size()) != T)
            why = tr("The corrupted prompt is %1 tokens, the model's text %2: patching needs "
                     "texts of the same length")
                      .arg(job->corruptIds.size())
                      .arg(T);
    }
    const bool needsTarget =
        s.mode == WorkbenchMode::Patching || s.mode == WorkbenchMode::Attribution;
    if (why.isEmpty() && readsText && (needsTarget || !s.target.trimmed().isEmpty())) {
        if (s.target.trimmed().isEmpty())
            why = tr("Pick the answer: a token from the predictions, or type it");
        else
            job->target = tokenId(s.target, "answer", &why);
    }
    if (why.isEmpty() && readsText && !s.foil.trimmed().isEmpty()) {
        job->foil = tokenId(s.foil, "foil", &why);
        if (why.isEmpty() && job->foil == job->target)
            why = tr("The foil is the answer: the metric would be 0 in every run");
    }
    if (why.isEmpty() && readsText) {
        // Refused before anything is allocated: patching keeps the clean and the corrupted run
        // (every map) at once, the other analyses one run.
        const model::Model& model = folder->model();
        const model::RunMemory need = model::runMemory(model, T, sizeof(float));
        const int runs = s.mode == WorkbenchMode::Patching ? 2 : 1;
        // The edited layer's weights, held in double beside the model's.
        double edited = 0;
        if (carried.scene) {
            const Projections& p = carried.scene->projections;
            edited = static_cast<double>(sizeof(double)) *
                     static_cast<double>(p.query.size() + p.key.size() + p.value.size() +
                                         p.output.size());
        }
        try {
            model::checkRunFitsInMemory(
                model, edited + need.storedWeights + runs * (need.total() - need.storedWeights),
                (runs == 2 ? "the clean and the corrupted run of " : "a run of ") +
                    std::to_string(T) + " tokens for " + model::analysisName(analysisOf(s.mode)),
                memoryLimit_);
        } catch (const model::ModelError& e) {
            why = QString::fromStdString(e.what());
        }
    }
    if (!why.isEmpty()) {
        emit problem(why);
        return;
    }
    job->position = readsText ? (s.position < 0 ? static_cast<int>(T) - 1 : s.position) : 0;
    cancel_ = std::make_shared<std::atomic<bool>>(false);
    running_ = true;
    const unsigned generation = ++generation_;
    const std::shared_ptr<std::atomic<bool>> stop = cancel_;
    const QPointer<WorkbenchSession> self(this);
    const std::vector<model::HeadAblation> off = carried.headsOff;
    worker_ = std::thread([=] {
        // With the what-if's weights when it edits them: every run, the corrupted one and each
        // patched one included, is of the edited model.
        model::Model editedModel;
        const model::Model* modelRead = &folder->model();
        const auto report = [&](double done) {
            QMetaObject::invokeMethod(self, [self, generation, done] {
                if (self && self->generation_ == generation) emit self->progress(done);
            });
            return !stop->load();
        };
        model::RunOptions options;
        options.ablations = off;
        QString failure;
        try {
            if (carried.scene) {
                editedModel = model::withLayerWeights(folder->model(), carried.layer,
                                                      *carried.scene, *carried.pristine);
                modelRead = &editedModel;
            }
            const model::Model& model = *modelRead;
            const auto runOn = [&](const std::vector<long long>& ids, double from, double span) {
                model::RunOptions withProgress = options;
                withProgress.afterLayer = [&](int done) {
                    return report(from + span * done / std::max(model.config.layers, 1));
                };
                return std::make_shared<const model::ModelRun<float>>(
                    model::runModel<float>(model, ids, withProgress));
            };
            switch (job->mode) {
                case WorkbenchMode::Patching:
                    job->patching = model::activationPatching<float>(
                        model, job->cleanIds, job->corruptIds, job->position, job->target,
                        job->foil, [&](double done) { return report(0.9 * done); }, {}, off);
                    job->cleanRun = runOn(job->cleanIds, 0.9, 0.05);
                    job->corruptRun = runOn(job->corruptIds, 0.95, 0.05);
                    break;
                case WorkbenchMode::Lens: {
                    std::vector<long long> targets;
                    if (job->target >= 0) targets.push_back(job->target);
                    if (job->foil >= 0) targets.push_back(job->foil);
                    job->cleanRun = runOn(job->cleanIds, 0, 0.8);
                    job->lens = model::logitLens(model, *job->cleanRun, targets, 5);
                    break;
                }
                case WorkbenchMode::Attribution:
                    job->cleanRun = runOn(job->cleanIds, 0, 0.9);
                    job->attribution = model::directLogitAttribution(
                        model, *job->cleanRun, job->position, job->target, job->foil);
                    break;
                case WorkbenchMode::Composition:
                    report(0.1);
                    job->composition = model::compositionScores(model);
                    job->compositionBaseline =
                        model::randomCompositionBaseline(model.config.hidden, model.config.headDim);
                    break;
            }
        } catch (const model::RunCancelled&) {
            failure = QStringLiteral("cancelled");
        } catch (const model::ModelError& e) {
            failure = QString::fromStdString(e.what());
        } catch (const std::bad_alloc&) {
            failure = tr("Not enough memory for this analysis of a model this size");
        }
        const std::shared_ptr<const WorkbenchResult> result =
            failure.isEmpty() ? std::shared_ptr<const WorkbenchResult>(job) : nullptr;
        QMetaObject::invokeMethod(self, [self, generation, result, failure] {
            if (!self || self->generation_ != generation) return;
            self->running_ = false;
            if (result) {
                self->result_ = result;
                emit self->finished();
            } else {
                emit self->problem(failure == QLatin1String("cancelled") ? tr("Cancelled")
                                                                         : failure);
            }
        });
    });
}

}  // namespace ae::document
