#pragma once
// The attention engine: every stage of one multi-head attention layer, cached.
//
//   X  = norm(embeddings + positions)                  Lq x dModel  (Xs: Lk x dModel for a source)
//        (norm: LayerNorm or RMSNorm, or none)
//   Q  = X·W_Q + b_Q                                     Lq x dProj
//   K  = Xs·W_K + b_K,  V = Xs·W_V + b_V                 Lk x dKV (dKV = dProj unless kvHeads)
//   per head of Q and per kv head of K (columns h·dHead .. (h+1)·dHead - 1), row by row:
//     q/k norm (RMSNorm over dHead), then rotary positions (row i at position i)
//   per head h, reading kv head g = h / (heads / kvHeads) of K and V:
//     scores_h  = Q_h·K_gᵀ                               Lq x Lk
//     scaled_h  = (scores_h + before_h) / divisor + after_h   Lq x Lk, the score terms
//                 (scene.scoreTerms) where the scene has them
//     capped_h  = cap·tanh(scaled_h / cap)               Lq x Lk, with a soft-cap only
//     weights_h = softmax(mask(capped_h, fill))          Lq x Lk, row-wise
//     context_h = weights_h·V_g                          Lq x dHead
//   an ablated head's context_h replaced: zeros, or every row its mean row (scene.ablation)
//   concat = [context_0 … context_{heads-1}]             Lq x dProj
//   output = concat·W_O + b_O                            Lq x dOut (only with an output projection)
//
// Stages are recomputed lazily from the earliest one a change touched: a new divisor redoes the
// scaling onwards, a new mask or fill the softmax onwards, switching heads off or on the contexts
// onwards (weights·V of every head, the weights kept), a new head count the per-head scores
// onwards (Q, K and V are only re-sliced; with rotary positions the rotation pairs columns within
// a head, so Q and K are projected again), a new q/k norm or rotation the projections onwards, and
// an edited embedding value only its row of X, Q, K, V (norm and rotation are per row) and its row
// and column of every score matrix.
//
// Scalar is double for `export` and the tests, float for the window and the benchmark.

#include <Eigen/Core>
#include <atomic>
#include <exception>
#include <functional>
#include <optional>
#include <vector>

#include "core/attention_kernel.h"
#include "core/scene.h"
#include "core/scene_error.h"
#include "core/stages.h"

namespace ae {

enum class Stream { Query, Source };

// How often each stage ran: lets tests check that a change did not redo more than it must.
struct EngineCounters {
    long fullPreparations = 0;  // X from embeddings, every row
    long fullProjections = 0;   // Q, K and V, every row
    long rowUpdates = 0;        // one edited embedding row pushed through X, Q, K, V and scores
    long scorePasses = 0;       // all heads' QKᵀ
    long scalePasses = 0;
    long softmaxPasses = 0;
};

// Where a computation starts: the earliest stage that is out of date, in pipeline order. The
// engine records what it must redo as one of these too (never EditedRows: it keeps the rows and
// marks Scaling, which pendingWork() reports as EditedRows).
// EditedRows: single embedding rows pushed through X, Q, K, V and the scores, then Scaling onwards.
enum class WorkFrom {
    Inputs,
    Projections,
    EditedRows,
    Scores,
    Scaling,
    Softmax,
    Context,
    Output,
    Nothing
};

// Work per score cell for the scaling and the softmax (a division, max, exp, sum, the memory
// traffic), in float-operation equivalents: calibrated against the products on the development
// machine, where a rescale at L = 512 takes 0.4 of a full pass.
constexpr double kSoftmaxCellFlops = 250.0;

// Estimated cost of computing `scene` from `from` to the end, in float operations: a product
// (m,k)·(k,n) counts 2·m·n·k, a score cell scaled and softmaxed kSoftmaxCellFlops. `editedRows`
// is the number of embedding rows an EditedRows start recomputes. 3-4 ms per 1e9 there.
double estimatedComputeFlops(const Scene& scene, WorkFrom from, int editedRows = 0);

// Lets another thread stop a compute() and follow it. Both members are optional; kept free of Qt.
struct ComputeControl {
    // Checked before every stage and every head.
    const std::atomic<bool>* cancel = nullptr;
    // Fraction of the estimated work done (0..1) and the stage under way. Called from the
    // computing threads (OpenMP workers too, possibly at the same time): store it, nothing more.
    std::function<void(double fraction, const char* stage)> progress;
};

// Thrown by compute() when ComputeControl::cancel was set. Every stage that had not finished
// stays marked out of date, so the next compute() redoes exactly those.
class ComputeCancelled : public std::exception {
public:
    const char* what() const noexcept override { return "compute cancelled"; }
};

template <typename Scalar>
class AttentionEngine {
public:
    using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
    using Array = Eigen::Array<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    // A head's columns of Q, K, V or concat: a strided view, never a copy.
    using ConstBlock = Eigen::Ref<const Matrix, 0, Eigen::OuterStride<>>;

    AttentionEngine() = default;
    explicit AttentionEngine(const Scene& scene) { setScene(scene); }

    // Replaces everything. The scene must be valid (as io::loadScene returns it).
    void setScene(const Scene& scene);
    const Scene& scene() const { return scene_; }

    // Parameter-only changes: none of them redoes the projections.
    void setHeads(int heads);  // throws SceneError unless checkHeadCount(scene, heads) passes
    void setScale(const Scale& scale);
    void setMask(const Mask& mask);
    void setMaskFill(double fill);
    // Heads switched off (version 2): redoes the contexts and the output only. Each head must be
    // below the head count (io::loadScene refuses others; setHeads refuses a change while any
    // head is switched off).
    void setAblation(const Scene::Ablation& ablation);
    // One embedding value: only that token's row is recomputed up to the scores.
    void setEmbeddingValue(Stream stream, int row, int column, double value);
    // Anything else about the inputs or weights: recompute from X.
    void setPositional(const Positional& positional);
    void setNorm(const LayerNorm& norm);
    void setProjections(const Projections& projections);
    // Version 2's per-head steps: the q/k norm (weights of dHead values) and the rotation.
    void setQkNorm(const HeadNorm& qkNorm);
    void setRotary(const std::optional<RopeParameters>& rotary);
    // The logit soft-cap (nullopt: none): the softmax onwards is redone.
    void setSoftCap(std::optional<double> cap);
    // The score terms (one Lq x Lk matrix a head in each list present): the scaling onwards.
    void setScoreTerms(const ScoreTerms& terms);
    // What does not change a number: token texts, title, window state. Sizes must stay the same.
    void setLabels(const std::vector<std::string>& tokens,
                   const std::vector<std::string>& sourceTokens);
    void setTitle(const std::string& title) { scene_.title = title; }
    void setViewJson(const std::string& viewJson) { scene_.viewJson = viewJson; }
    // After an edit the matrices no longer match `init`: save them explicitly from now on.
    void forgetInit() { scene_.init.reset(); }

    // Forgets every cached stage, so the next compute() is a full pass (benchmarks, tests).
    void invalidateAll() { invalidateFrom(WorkFrom::Inputs); }

    // Brings every stage up to date. Numbers that are not finite in Scalar are refused with
    // SceneError("<stage>", "overflow (values too large to represent)"), as soon as they appear:
    // "x" (inputs past Scalar's range), "scores" (Q or K, checked before the products, or the
    // scaled scores), "context" (V, or weights·V), "output". The stages before stay valid.
    // Throws ComputeCancelled when control.cancel is set; a stage is only marked valid once it is
    // complete.
    void compute(const ComputeControl& control = {});
    // What compute() would redo now, and its estimated cost (estimatedComputeFlops).
    WorkFrom pendingWork() const;
    double pendingFlops() const;

    // Results (valid after compute()).
    int heads() const { return scene_.heads; }
    int dHead() const { return dProj_ / scene_.heads; }
    double divisor() const { return divisor_; }
    const BoolMatrix& allowed() const { return mask_.visible(); }  // Lq x Lk
    const std::vector<int>& fullyMaskedRows() const { return mask_.fullyMaskedRows(); }
    const Matrix& x() const { return x_; }                                      // Lq x dModel
    const Matrix& xSource() const { return scene_.hasSource ? xSource_ : x_; }  // Lk x dModel
    const Matrix& query() const { return q_; }                                  // Lq x dProj
    const Matrix& key() const { return ownKeys() ? k_ : q_; }                   // Lk x dKV
    const Matrix& value() const { return v_; }                                  // Lk x dKV
    ConstBlock headQuery(int h) const { return query().middleCols(h * dHead(), dHead()); }
    // K and V of the kv head that query head h reads (itself unless grouped).
    ConstBlock headKey(int h) const {
        return key().middleCols(scene_.keyValueHeadOf(h) * dHead(), dHead());
    }
    ConstBlock headValue(int h) const {
        return value().middleCols(scene_.keyValueHeadOf(h) * dHead(), dHead());
    }
    const Matrix& scores(int h) const { return scores_[h]; }  // Lq x Lk
    const Matrix& scaled(int h) const { return scaled_[h]; }  // Lq x Lk
    const Matrix& capped(int h) const { return capped_[h]; }  // Lq x Lk, with a soft-cap
    // Lq x Lk, with the scene's terms before / after the scale.
    const Matrix& positionTerms(int h) const { return beforeScale_[h]; }
    const Matrix& positionBias(int h) const { return afterScale_[h]; }
    const Matrix& weights(int h) const { return weights_[h]; }  // Lq x Lk
    ConstBlock context(int h) const { return concat_.middleCols(h * dHead(), dHead()); }
    const Matrix& concat() const { return concat_; }  // Lq x dProj
    bool hasOutput() const { return scene_.projections.hasOutput; }
    const Matrix& output() const { return output_; }  // Lq x dOut
    // The matrix of a stage of the table in stages.h, for head `head` (ignored when the stage is
    // not per head): a view, in the stage's shape.
    ConstBlock stageMatrix(Stage stage, int head) const;
    // Whether this layer has the stage (output only with an output projection, capped only with
    // a soft-cap, the position terms and bias only with those score terms).
    bool hasStage(Stage stage) const {
        if (stage == Stage::Output) return hasOutput();
        if (stage == Stage::Capped) return scene_.softCap.has_value();
        if (stage == Stage::PositionTerms) return !scene_.scoreTerms.beforeScale.empty();
        if (stage == Stage::PositionBias) return !scene_.scoreTerms.afterScale.empty();
        return true;
    }

    const EngineCounters& counters() const { return counters_; }
    // Bytes of every matrix this engine holds now (its scene copy included, token texts not):
    // after compute() this is what engineBytes(scene, sizeof(Scalar)) predicts.
    double heldBytes() const;

private:
    bool separateKeys() const { return scene_.projections.mode == ProjectionMode::Separate; }
    // K is a matrix of its own (not Q itself): with a source, separate weights, or a key norm.
    bool ownKeys() const { return scene_.hasSource || separateKeys() || scene_.qkNorm.enabled; }
    // The q/k norm and the rotation of rows of Q and of K that start at position firstRow (the
    // same rows of both, or none of either: 0 rows), head by head.
    void transformHeads(Eigen::Ref<Matrix> queries, Eigen::Ref<Matrix> keys,
                        Eigen::Index firstRow) const;
    bool transformsHeads() const { return scene_.qkNorm.enabled || scene_.rotary.has_value(); }
    void refreshFrequencies();
    // A change marks the earliest stage it invalidates.
    void invalidateFrom(WorkFrom stage);
    void convertWeights();
    void prepareAll();
    void projectAll();
    void updateEditedRows();
    // `done` and `total`: flops finished before the heads and of the whole compute, for progress.
    void computeHeads(WorkFrom from, const ComputeControl& control, double done, double total);
    // Throws SceneError(stage, "overflow ...") unless every value of `m` is finite.
    static void requireFinite(const Matrix& m, const char* stage);
    void computeOutput();
    void refreshMask();

    Scene scene_;
    WorkFrom dirtyFrom_ = WorkFrom::Inputs;
    std::vector<int> editedQueryRows_, editedSourceRows_;

    int dProj_ = 0;
    double divisor_ = 1.0;
    attention::SoftmaxMask<Scalar> mask_;  // the scene's mask and fill, Lq x Lk, whole rows

    Matrix wq_, wk_, wv_, wo_;
    Vector bq_, bk_, bv_, bo_;
    Vector queryNormWeight_, keyNormWeight_;  // dHead each, only with a q/k norm
    std::vector<double> inverseFrequencies_;  // dHead/2 rotary θ_i, only with rotary positions
    Matrix x_, xSource_, q_, k_, v_;
    std::vector<Matrix> scores_, scaled_, capped_, weights_;
    std::vector<Matrix> beforeScale_, afterScale_;  // the scene's score terms in Scalar
    Matrix concat_, output_;
    EngineCounters counters_;
};

extern template class AttentionEngine<float>;
extern template class AttentionEngine<double>;

// X for one stream: embeddings plus positions, then the norm (layer or RMS).
// rows x dModel -> rows x dModel.
// `firstRow` is the position of the first row, so one edited row can be prepared on its own.
MatrixD prepareInputs(const Scene& scene, const MatrixD& embeddings, int firstRow = 0);
// The same before the norm: embeddings plus positions.  rows x dModel -> rows x dModel.
MatrixD inputsWithPositions(const Scene& scene, const MatrixD& embeddings, int firstRow = 0);

}  // namespace ae
