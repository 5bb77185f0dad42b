#include "core/attention_engine.h"
#include "core/ops.h"
#include "core/parallel_product.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace ae {

double estimatedComputeFlops(const Scene& scene, WorkFrom from, int editedRows) {
    const double lq = scene.queryCount(), lk = scene.keyCount();
    const double dModel = scene.dModel(), dProj = scene.dProj(), dKV = scene.dKeyValue();
    const double dOut = scene.projections.hasOutput ? scene.projections.output.cols() : 0.0;
    const bool identity = scene.projections.mode == ProjectionMode::Identity;
    // Keys are the queries unless there is a source, separate key weights or a key norm; values
    // always. Grouped keys and values are dKV wide.
    const double keyValueProducts = scene.hasSource ||
                                            scene.projections.mode == ProjectionMode::Separate ||
                                            scene.qkNorm.enabled
                                        ? 2.0
                                        : 1.0;
    double flops = 0.0;
    switch (from) {
        case WorkFrom::Inputs:
            flops += 10.0 * (lq + (scene.hasSource ? lk : 0.0)) * dModel;  // positions, norm
            [[fallthrough]];
        case WorkFrom::Projections:
            if (!identity)
                flops += 2.0 * dModel * dProj * (lq + keyValueProducts * lk * (dKV / dProj));
            flops += estimatedComputeFlops(scene, WorkFrom::Scores);
            break;
        case WorkFrom::EditedRows:
            // Per row: X, Q, K and V, then a row and a column of the scores of every head.
            flops += editedRows * (6.0 * dModel * dProj + 2.0 * (lq + lk) * dProj);
            flops += estimatedComputeFlops(scene, WorkFrom::Scaling);
            break;
        case WorkFrom::Scores:
            flops += 2.0 * lq * lk * dProj;  // every head's (Lq,dHead)·(dHead,Lk)
            [[fallthrough]];
        case WorkFrom::Scaling:
        case WorkFrom::Softmax:
            flops += scene.heads * lq * lk * kSoftmaxCellFlops;
            [[fallthrough]];
        case WorkFrom::Context:
            flops += 2.0 * lq * lk * dProj;  // every head's (Lq,Lk)·(Lk,dHead)
            [[fallthrough]];
        case WorkFrom::Output:
            flops += 2.0 * lq * dProj * dOut;
            break;
        case WorkFrom::Nothing:
            break;
    }
    return flops;
}

MatrixD inputsWithPositions(const Scene& scene, const MatrixD& embeddings, int firstRow) {
    MatrixD x = embeddings;
    ops::addPositions(x, scene.positional.kind, scene.positional.base, scene.positional.table,
                      firstRow);
    return x;
}

MatrixD prepareInputs(const Scene& scene, const MatrixD& embeddings, int firstRow) {
    MatrixD x = inputsWithPositions(scene, embeddings, firstRow);
    if (scene.norm.enabled && scene.norm.kind == NormKind::Rms) {
        ops::rmsNormRows(x, scene.norm.weight, scene.norm.eps);
    } else if (scene.norm.enabled) {
        ops::layerNormRows(x, scene.norm.weight, scene.norm.bias, scene.norm.eps);
    }
    return x;
}

template <typename Scalar>
void AttentionEngine<Scalar>::setScene(const Scene& scene) {
    scene_ = scene;
    dProj_ = scene_.dProj();
    convertWeights();
    refreshFrequencies();
    refreshMask();
    invalidateFrom(WorkFrom::Inputs);
}

template <typename Scalar>
void AttentionEngine<Scalar>::refreshFrequencies() {
    inverseFrequencies_ = scene_.rotary ? ops::ropeInverseFrequencies(dHead(), *scene_.rotary)
                                        : std::vector<double>();
}

template <typename Scalar>
void AttentionEngine<Scalar>::setHeads(int heads) {
    checkHeadCount(scene_, heads);
    if (heads == scene_.heads) return;
    scene_.heads = heads;
    refreshFrequencies();
    // The rotation pairs column i with i + dHead/2 of each head: a new dHead rotates anew.
    invalidateFrom(scene_.rotary ? WorkFrom::Projections : WorkFrom::Scores);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setScale(const Scale& scale) {
    scene_.scale = scale;
    invalidateFrom(WorkFrom::Scaling);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setMask(const Mask& mask) {
    scene_.mask = mask;
    refreshMask();
    invalidateFrom(WorkFrom::Softmax);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setMaskFill(double fill) {
    scene_.maskFill = fill;
    refreshMask();
    invalidateFrom(WorkFrom::Softmax);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setAblation(const Scene::Ablation& ablation) {
    if (ablation == scene_.ablation) return;
    scene_.ablation = ablation;
    invalidateFrom(WorkFrom::Context);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setEmbeddingValue(Stream stream, int row, int column, double value) {
    const bool source = stream == Stream::Source && scene_.hasSource;
    MatrixD& embeddings = source ? scene_.sourceEmbeddings : scene_.embeddings;
    embeddings(row, column) = value;
    // Only a pass from the inputs rebuilds X; a pass from the projections (new weights) reuses it,
    // so the edited row is still recorded then.
    if (dirtyFrom_ <= WorkFrom::Inputs) return;
    std::vector<int>& rows = source ? editedSourceRows_ : editedQueryRows_;
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    dirtyFrom_ = std::min(dirtyFrom_, WorkFrom::Scaling);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setPositional(const Positional& positional) {
    scene_.positional = positional;
    invalidateFrom(WorkFrom::Inputs);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setNorm(const LayerNorm& norm) {
    scene_.norm = norm;
    invalidateFrom(WorkFrom::Inputs);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setProjections(const Projections& projections) {
    scene_.projections = projections;
    dProj_ = scene_.dProj();
    if (dProj_ % scene_.heads != 0) scene_.heads = 1;
    convertWeights();
    invalidateFrom(WorkFrom::Projections);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setQkNorm(const HeadNorm& qkNorm) {
    scene_.qkNorm = qkNorm;
    convertWeights();
    invalidateFrom(WorkFrom::Projections);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setRotary(const std::optional<RopeParameters>& rotary) {
    scene_.rotary = rotary;
    refreshFrequencies();
    invalidateFrom(WorkFrom::Projections);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setSoftCap(std::optional<double> cap) {
    scene_.softCap = cap;
    invalidateFrom(WorkFrom::Scaling);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setScoreTerms(const ScoreTerms& terms) {
    scene_.scoreTerms = terms;
    convertWeights();
    invalidateFrom(WorkFrom::Scaling);
}

template <typename Scalar>
void AttentionEngine<Scalar>::setLabels(const std::vector<std::string>& tokens,
                                        const std::vector<std::string>& sourceTokens) {
    scene_.tokens = tokens;
    scene_.sourceTokens = sourceTokens;
}

template <typename Scalar>
void AttentionEngine<Scalar>::invalidateFrom(WorkFrom stage) {
    dirtyFrom_ = std::min(dirtyFrom_, stage);
    if (dirtyFrom_ <= WorkFrom::Inputs) {
        editedQueryRows_.clear();
        editedSourceRows_.clear();
    }
}

template <typename Scalar>
void AttentionEngine<Scalar>::convertWeights() {
    const Projections& p = scene_.projections;
    wq_ = p.query.cast<Scalar>();
    wk_ = p.key.cast<Scalar>();
    wv_ = p.value.cast<Scalar>();
    bq_ = p.queryBias.cast<Scalar>();
    bk_ = p.keyBias.cast<Scalar>();
    bv_ = p.valueBias.cast<Scalar>();
    wo_ = p.output.cast<Scalar>();
    bo_ = p.outputBias.cast<Scalar>();
    const auto converted = [](const std::vector<MatrixD>& terms) {
        std::vector<Matrix> out;
        out.reserve(terms.size());
        for (const MatrixD& m : terms)
            out.push_back(m.cast<Scalar>());
        return out;
    };
    beforeScale_ = converted(scene_.scoreTerms.beforeScale);
    afterScale_ = converted(scene_.scoreTerms.afterScale);
    if (p.mode != ProjectionMode::Identity) {
        const int dKV = scene_.dKeyValue();
        if (bq_.size() == 0) bq_ = Vector::Zero(dProj_);
        if (bk_.size() == 0) bk_ = Vector::Zero(p.mode == ProjectionMode::Separate ? dKV : dProj_);
        if (bv_.size() == 0) bv_ = Vector::Zero(dKV);
    }
    if (p.hasOutput && bo_.size() == 0) bo_ = Vector::Zero(wo_.cols());
    const HeadNorm& norm = scene_.qkNorm;
    queryNormWeight_ = norm.enabled ? norm.queryWeight.cast<Scalar>() : Vector();
    keyNormWeight_ = norm.enabled ? norm.keyWeight.cast<Scalar>() : Vector();
}

template <typename Scalar>
void AttentionEngine<Scalar>::transformHeads(Eigen::Ref<Matrix> queries, Eigen::Ref<Matrix> keys,
                                             Eigen::Index firstRow) const {
    // Every head turns these rows by the same angles: computed once for all of them.
    const ops::RotaryAngles angles =
        scene_.rotary
            ? ops::rotaryAngles(static_cast<int>(firstRow), std::max(queries.rows(), keys.rows()),
                                inverseFrequencies_, scene_.rotary->attentionFactor)
            : ops::RotaryAngles{};
    attention::HeadTransform<Scalar> transform;
    transform.headDim = dHead();
    if (scene_.qkNorm.enabled) {
        transform.norm = scene_.qkNorm.fullWidth ? attention::QkNormSpan::FullWidth
                                                 : attention::QkNormSpan::PerHead;
        transform.queryNormWeight = queryNormWeight_.data();
        transform.keyNormWeight = keyNormWeight_.data();
        transform.normEps = scene_.qkNorm.eps;
    }
    if (scene_.rotary) transform.angles = &angles;
    attention::transformHeads<Scalar>(queries, keys, transform);
}

template <typename Scalar>
void AttentionEngine<Scalar>::refreshMask() {
    mask_.rebuild(scene_.mask, scene_.maskFill, scene_.queryCount(), scene_.keyCount());
}

template <typename Scalar>
WorkFrom AttentionEngine<Scalar>::pendingWork() const {
    // Edited rows are recorded with Scaling onwards out of date: the rows come first.
    const bool editedRows = !editedQueryRows_.empty() || !editedSourceRows_.empty();
    return dirtyFrom_ == WorkFrom::Scaling && editedRows ? WorkFrom::EditedRows : dirtyFrom_;
}

template <typename Scalar>
double AttentionEngine<Scalar>::pendingFlops() const {
    return estimatedComputeFlops(
        scene_, pendingWork(),
        static_cast<int>(editedQueryRows_.size() + editedSourceRows_.size()));
}

template <typename Scalar>
void AttentionEngine<Scalar>::compute(const ComputeControl& control) {
    auto checkCancel = [&control] {
        if (control.cancel && control.cancel->load(std::memory_order_relaxed))
            throw ComputeCancelled();
    };
    // Progress is the share of the estimated work no longer pending.
    const double total = std::max(1.0, pendingFlops());
    auto report = [&](const char* stage) {
        if (control.progress) control.progress(1.0 - pendingFlops() / total, stage);
    };
    checkCancel();
    if (dirtyFrom_ > WorkFrom::Inputs &&
        (!editedQueryRows_.empty() || !editedSourceRows_.empty())) {
        report("edited rows");
        updateEditedRows();
    }
    editedQueryRows_.clear();
    editedSourceRows_.clear();
    divisor_ = scene_.divisor();
    if (dirtyFrom_ <= WorkFrom::Inputs) {
        checkCancel();
        report("inputs");
        prepareAll();
        dirtyFrom_ = WorkFrom::Projections;
    }
    if (dirtyFrom_ <= WorkFrom::Projections) {
        checkCancel();
        report("projections");
        projectAll();
        dirtyFrom_ = WorkFrom::Scores;
    }
    if (dirtyFrom_ <= WorkFrom::Context) {
        checkCancel();
        // May throw on overflow or cancel; dirtyFrom_ then stays where it was.
        computeHeads(dirtyFrom_, control, total - pendingFlops(), total);
        dirtyFrom_ = WorkFrom::Output;
    }
    if (dirtyFrom_ <= WorkFrom::Output) {
        checkCancel();
        report("output");
        computeOutput();
        dirtyFrom_ = WorkFrom::Nothing;
    }
    report("done");
}

template <typename Scalar>
void AttentionEngine<Scalar>::requireFinite(const Matrix& m, const char* stage) {
    if (!allFiniteFast(m)) throw SceneError(stage, "overflow (values too large to represent)");
}

template <typename Scalar>
void AttentionEngine<Scalar>::prepareAll() {
    ++counters_.fullPreparations;
    // Computed in double, stored in Scalar: 1e39 is finite in double but not in float. Without
    // positions or a norm X is the embeddings themselves, converted without a copy in between.
    const bool plain = scene_.positional.kind == PositionalKind::None && !scene_.norm.enabled;
    const auto prepare = [&](const MatrixD& embeddings, Matrix& x) {
        if (plain) {
            x = embeddings.template cast<Scalar>();  // in place: no new buffer for the same shape
        } else {
            x = prepareInputs(scene_, embeddings).template cast<Scalar>();
        }
        requireFinite(x, "x");
    };
    prepare(scene_.embeddings, x_);
    if (scene_.hasSource) {
        prepare(scene_.sourceEmbeddings, xSource_);
    } else {
        xSource_.resize(0, 0);
    }
}

template <typename Scalar>
void AttentionEngine<Scalar>::projectAll() {
    ++counters_.fullProjections;
    const Matrix& xs = xSource();
    // Q's and K's heads normalised and rotated, after the projections were checked.
    const auto transformAll = [this] {
        if (!transformsHeads()) return;
        transformHeads(q_, k_, 0);  // K is empty when the keys are the queries
    };
    if (scene_.projections.mode == ProjectionMode::Identity) {
        q_ = x_;
        if (ownKeys()) {
            k_ = xs;
        } else {
            k_.resize(0, 0);
        }
        v_ = xs;
        transformAll();
        return;  // X was checked already
    }
    // 1e30·1e30 is inf in float: refused here, before the products. An infinite Q or K makes
    // every score of its row or column inf or NaN (inf·0 is NaN), and an infinite V every
    // context row, so they are refused as the stage they spoil, in the reference's words. The
    // products check their own output as they go (affine's result).
    const auto refuseUnless = [](bool finite, const char* stage) {
        if (!finite) throw SceneError(stage, "overflow (values too large to represent)");
    };
    // Q, K and V in one parallel region: at L = 64 a barrier per product was a tenth of the pass.
    if (ownKeys()) {
        const bool separate = separateKeys();
        const std::vector<bool> finite =
            affineBatch<Matrix, Vector>({{x_, wq_, &bq_, q_},
                                         {xs, separate ? wk_ : wq_, separate ? &bk_ : &bq_, k_},
                                         {xs, wv_, &bv_, v_}});
        refuseUnless(finite[0] && finite[1], "scores");
        refuseUnless(finite[2], "context");
    } else {
        k_.resize(0, 0);  // keys are the queries
        const std::vector<bool> finite =
            affineBatch<Matrix, Vector>({{x_, wq_, &bq_, q_}, {xs, wv_, &bv_, v_}});
        refuseUnless(finite[0], "scores");
        refuseUnless(finite[1], "context");
    }
    transformAll();
}

template <typename Scalar>
void AttentionEngine<Scalar>::updateEditedRows() {
    ++counters_.rowUpdates;
    const bool identity = scene_.projections.mode == ProjectionMode::Identity;
    const bool separate = separateKeys();
    // Recomputes one row of X and of the projections that read it.
    auto projectRow = [&](Matrix& target, Eigen::Index row, const Matrix& x, const Matrix& w,
                          const Vector& b) {
        if (identity) {
            target.row(row) = x.row(row);
        } else {
            target.row(row).noalias() = x.row(row) * w;
            target.row(row) += b.transpose();
        }
    };
    // New weights are due (a full projection pass follows): only X's rows are brought up to date.
    const bool projectRows = dirtyFrom_ > WorkFrom::Projections;
    const bool transform = transformsHeads();
    for (int i : editedQueryRows_) {
        x_.row(i) =
            prepareInputs(scene_, scene_.embeddings.middleRows(i, 1), i).template cast<Scalar>();
        if (!projectRows) continue;
        projectRow(q_, i, x_, wq_, bq_);
        const bool keyRow = !scene_.hasSource && ownKeys();
        if (keyRow) projectRow(k_, i, x_, separate ? wk_ : wq_, separate ? bk_ : bq_);
        if (!scene_.hasSource) projectRow(v_, i, x_, wv_, bv_);
        if (transform)
            transformHeads(q_.middleRows(i, 1), k_.middleRows(keyRow ? i : 0, keyRow ? 1 : 0), i);
    }
    for (int j : editedSourceRows_) {
        xSource_.row(j) = prepareInputs(scene_, scene_.sourceEmbeddings.middleRows(j, 1), j)
                              .template cast<Scalar>();
        if (!projectRows) continue;
        projectRow(k_, j, xSource_, separate ? wk_ : wq_, separate ? bk_ : bq_);
        if (transform) transformHeads(q_.topRows(0), k_.middleRows(j, 1), j);
        projectRow(v_, j, xSource_, wv_, bv_);
    }
    // The edited rows only: the others were checked when they were computed. On a refusal the
    // rows stay listed, so the next compute() redoes them (with the value put back).
    const auto requireFiniteRows = [](const Matrix& m, const std::vector<int>& rows,
                                      const char* stage) {
        for (int r : rows) {
            if (!m.row(r).allFinite())
                throw SceneError(stage, "overflow (values too large to represent)");
        }
    };
    const Matrix& xs = scene_.hasSource ? xSource_ : x_;
    const std::vector<int>& sourceRows = scene_.hasSource ? editedSourceRows_ : editedQueryRows_;
    requireFiniteRows(x_, editedQueryRows_, "x");
    requireFiniteRows(xs, sourceRows, "x");
    // Rows not projected here still hold numbers from before; the full pass checks them.
    if (!projectRows) return;
    requireFiniteRows(q_, editedQueryRows_, "scores");
    if (ownKeys()) requireFiniteRows(k_, sourceRows, "scores");
    requireFiniteRows(v_, sourceRows, "context");
    if (dirtyFrom_ <= WorkFrom::Scores) return;  // the scores are recomputed in full anyway
    // One query row changes a row of each score matrix; one key row changes a column.
    const std::vector<int>& keyRows = scene_.hasSource ? editedSourceRows_ : editedQueryRows_;
    for (int h = 0; h < scene_.heads; ++h) {
        const ConstBlock qh = headQuery(h);
        const ConstBlock kh = headKey(h);
        for (int i : editedQueryRows_)
            scores_[h].row(i).noalias() = qh.row(i) * kh.transpose();
        for (int j : keyRows)
            scores_[h].col(j).noalias() = qh * kh.row(j).transpose();
    }
}

template <typename Scalar>
void AttentionEngine<Scalar>::computeHeads(WorkFrom from, const ComputeControl& control,
                                           double done, double total) {
    const int heads = scene_.heads;
    const double headFlops =
        (pendingFlops() - estimatedComputeFlops(scene_, WorkFrom::Output)) / heads;
    std::atomic<int> headsDone{0};
    std::atomic<bool> cancelled{false};
    if (from <= WorkFrom::Scores) ++counters_.scorePasses;
    if (from <= WorkFrom::Scaling) ++counters_.scalePasses;
    if (from <= WorkFrom::Softmax) ++counters_.softmaxPasses;
    // Heads run in parallel, one thread per head, and Eigen's products inside run single-threaded
    // (Eigen does not nest its own OpenMP inside a parallel region). The buffers are kept and
    // never shrink: a head count that goes down and up again reuses them.
    attention::HeadOptions<Scalar> options;
    options.scale = attention::ScoreScale::dividedBy(divisor_);
    options.mask = &mask_;
    options.from = from <= WorkFrom::Scores    ? attention::AttendFrom::Scores
                   : from <= WorkFrom::Scaling ? attention::AttendFrom::Scaled
                   : from <= WorkFrom::Softmax ? attention::AttendFrom::Weights
                                               : attention::AttendFrom::Context;
    options.softCap = scene_.softCap.value_or(0.0);
    if (!beforeScale_.empty()) options.preBias = &beforeScale_;
    if (!afterScale_.empty()) options.bias = &afterScale_;
    options.checkFinite = true;
    // A cancelled compute skips the heads not yet started (OpenMP cannot break out of a loop).
    options.beginHead = [&](int) {
        if (control.cancel && control.cancel->load(std::memory_order_relaxed)) {
            cancelled.store(true);
            return false;
        }
        if (control.progress)
            control.progress((done + headsDone.load() * headFlops) / total, "heads");
        return true;
    };
    options.endHead = [&](int) { ++headsDone; };
    const attention::AttendResult result = attention::attendHeads<Scalar>(
        {q_, key(), v_, heads, scene_.keyValueHeads(), dHead()},
        {&scores_, &scaled_, &weights_, &concat_, &capped_}, options);
    if (cancelled.load()) throw ComputeCancelled();
    if (result.logitsOverflow)
        throw SceneError("scores", "overflow (values too large to represent)");
    if (result.contextOverflow)
        throw SceneError("context", "overflow (values too large to represent)");
    // Switched-off heads, after every context is known (a mean needs the whole head).
    for (int h : scene_.ablation.heads)
        ops::ablateContextColumns<Scalar>(concat_, h, dHead(), scene_.ablation.byMean);
}

template <typename Scalar>
typename AttentionEngine<Scalar>::ConstBlock AttentionEngine<Scalar>::stageMatrix(Stage stage,
                                                                                  int head) const {
    switch (stage) {
        case Stage::Query:
            return headQuery(head);
        case Stage::Key:
            return headKey(head);
        case Stage::Value:
            return headValue(head);
        case Stage::Scores:
            return scores(head);
        case Stage::Scaled:
            return scaled(head);
        case Stage::Capped:
            return scene_.softCap ? capped(head) : scaled(head);
        case Stage::PositionTerms:
            return hasStage(stage) ? positionTerms(head) : scores(head);
        case Stage::PositionBias:
            return hasStage(stage) ? positionBias(head) : scaled(head);
        case Stage::Weights:
            return weights(head);
        case Stage::Context:
            return context(head);
        case Stage::Concat:
            return concat();
        case Stage::Output:
            return output();
    }
    return weights(head);
}

template <typename Scalar>
void AttentionEngine<Scalar>::computeOutput() {
    if (!scene_.projections.hasOutput) {
        output_.resize(0, 0);
        return;
    }
    // (Lq, dProj)·(dProj, dOut), checked as it is computed
    if (!affine(concat_, wo_, bo_, output_))
        throw SceneError("output", "overflow (values too large to represent)");
}

template <typename Scalar>
double AttentionEngine<Scalar>::heldBytes() const {
    const Projections& p = scene_.projections;
    const auto n = [](const auto& m) { return static_cast<double>(m.size()); };
    double doubles = n(scene_.embeddings) + n(scene_.sourceEmbeddings) +
                     n(scene_.positional.table) + n(scene_.norm.weight) + n(scene_.norm.bias) +
                     n(p.query) + n(p.key) + n(p.value) + n(p.output) + n(p.queryBias) +
                     n(p.keyBias) + n(p.valueBias) + n(p.outputBias) +
                     n(scene_.qkNorm.queryWeight) + n(scene_.qkNorm.keyWeight);
    for (const std::vector<MatrixD>* terms :
         {&scene_.scoreTerms.beforeScale, &scene_.scoreTerms.afterScale})
        for (const MatrixD& m : *terms)
            doubles += n(m);
    double scalars = n(wq_) + n(wk_) + n(wv_) + n(wo_) + n(bq_) + n(bk_) + n(bv_) + n(bo_) +
                     n(queryNormWeight_) + n(keyNormWeight_) + n(x_) + n(xSource_) + n(q_) + n(k_) +
                     n(v_) + n(concat_) + n(output_) + n(mask_.visibleAsOne()) +
                     n(mask_.hiddenAsMinusInfinity());
    for (int h = 0; h < scene_.heads; ++h)
        scalars +=
            n(scores_[h]) + n(scaled_[h]) + n(weights_[h]) + (scene_.softCap ? n(capped_[h]) : 0.0);
    for (const std::vector<Matrix>* terms : {&beforeScale_, &afterScale_})
        for (const Matrix& m : *terms)
            scalars += n(m);
    const double bools = n(mask_.visible()) + (scene_.mask.allowed ? n(*scene_.mask.allowed) : 0.0);
    return doubles * sizeof(double) + scalars * sizeof(Scalar) + bools * sizeof(bool);
}

template class AttentionEngine<float>;
template class AttentionEngine<double>;

}  // namespace ae
