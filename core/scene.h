#pragma once
// The scene: everything that defines one attention layer and its inputs, in double precision.
// Plain C++ and Eigen: the file format lives in io/, the computation in attention_engine.h.
// Dimension names are those of core/dimensions.h: Lq rows of `embeddings`, Lk rows of
// `sourceEmbeddings` in cross-attention.

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ae {

// Row-major throughout: a query's scores are one contiguous row, as the softmax and the heatmaps
// want them.
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using VectorD = Eigen::VectorXd;
using BoolMatrix = Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

enum class ProjectionMode { Separate, SharedQK, Identity };
enum class PositionalKind { None, Sinusoidal, Learned };
enum class ScaleKind { SqrtDk, SqrtDmodel, None, Divisor };
enum class InitDistribution { Normal, Uniform, Integers };

// Parameters of the deterministic generator that can stand in for explicit matrices.
struct InitSpec {
    std::uint64_t seed = 0;
    InitDistribution distribution = InitDistribution::Normal;
    double std = 1.0;
    double low = -1.0;  // integers: 0
    double high = 1.0;  // integers: 3
    std::optional<int> dModel;
    std::optional<int> dProj;
    ProjectionMode mode = ProjectionMode::Separate;
    bool output = false;
    bool bias = false;
    // Whether the source embeddings were drawn too (they may be given explicitly even when the
    // query embeddings are drawn); only meaningful with a source and dModel.
    bool drawnSource = false;
};

struct Positional {
    PositionalKind kind = PositionalKind::None;
    double base = 10000.0;  // sinusoidal
    MatrixD table;          // learned: at least max(Lq, Lk) x dModel
};

// Rotary positions: the scaling a checkpoint's config asks for (Hugging Face's rope_type).
// LongRope (Phi-3): each frequency divided by its own factor, and cos and sin multiplied by an
// attention factor; a model picks its short or long factors by the length of the text, a scene
// holds the set its layer used.
enum class RopeScaling { None, Linear, Llama3, LongRope };
struct RopeParameters {
    double theta = 10000.0;  // rope_theta
    RopeScaling scaling = RopeScaling::None;
    double factor = 1.0;                   // linear and llama3
    double lowFrequencyFactor = 1.0;       // llama3
    double highFrequencyFactor = 4.0;      // llama3, > lowFrequencyFactor
    double originalMaxPositions = 8192.0;  // llama3: original_max_position_embeddings
    // Partial rotation (Phi-3's partial_rotary_factor, GPT-NeoX's rotary_pct): each head's first
    // rotaryDim values turn, the rest pass unchanged. 0: the whole head.
    int rotaryDim = 0;
    std::vector<double> longRopeFactors;  // longrope: rotaryDim/2 positive factors, one a pair
    double attentionFactor = 1.0;         // longrope: cos and sin times this
    // The values that turn in a head of headDim.
    int turnedDims(int headDim) const { return rotaryDim > 0 ? rotaryDim : headDim; }
    bool operator==(const RopeParameters& o) const {
        return theta == o.theta && scaling == o.scaling && factor == o.factor &&
               lowFrequencyFactor == o.lowFrequencyFactor &&
               highFrequencyFactor == o.highFrequencyFactor &&
               originalMaxPositions == o.originalMaxPositions && rotaryDim == o.rotaryDim &&
               longRopeFactors == o.longRopeFactors && attentionFactor == o.attentionFactor;
    }
};

// The pre-norm: LayerNorm (GPT-2, version 1) or RMSNorm (Llama, Qwen; version 2).
enum class NormKind { Layer, Rms };

struct LayerNorm {
    bool enabled = false;
    NormKind kind = NormKind::Layer;
    VectorD weight;  // dModel, ones by default
    VectorD bias;    // dModel, zeros by default; RMSNorm has none and ignores it
    double eps = 1e-5;
};

// Qwen3's q_norm and k_norm: an RMSNorm over each head's dHead columns of Q (and of K), with one
// weight vector shared by every head, applied after the projection and before the rotation. Full
// width (OLMo 2): one RMSNorm over each whole row of Q (dProj) and of K (dKV) before the heads
// split. Gemma's (1 + w) is written as the multiplier itself.
struct HeadNorm {
    bool enabled = false;
    bool fullWidth = false;
    VectorD queryWeight;  // dHead, or dProj over the full width
    VectorD keyWeight;    // dHead, or dKV
    double eps = 1e-6;
};

struct Projections {
    ProjectionMode mode = ProjectionMode::Separate;
    MatrixD query;               // dModel x dProj (empty in identity mode)
    MatrixD key;                 // dModel x dKV (empty unless separate: shared_qk uses `query`)
    MatrixD value;               // dModel x dKV (empty in identity mode)
    VectorD queryBias;           // dProj; zeros when absent
    VectorD keyBias, valueBias;  // dKV each; zeros when absent
    bool hasOutput = false;
    MatrixD output;      // dProj x dOut
    VectorD outputBias;  // dOut
};

struct Mask {
    bool causal = false;
    std::optional<int> window;          // |i - j| <= window
    std::vector<bool> padding;          // empty, or one per key: true hides that key
    std::optional<BoolMatrix> allowed;  // Lq x Lk, true where the query may see the key
};

// Version 2: terms added to each head's scores, one Lq x Lk matrix per head in each list present
// (empty: none). They carry what a model computes from relative positions:
//   beforeScale: added to q·kᵀ before the scale (DeBERTa's c2p + p2c):
//                scaled = (scores + beforeScale) / divisor
//   afterScale:  added after it (MPNet's relative position bias):
//                scaled = scores / divisor + afterScale
// Both are numbers of the scene, not recomputed from its positions or content: a model layer's
// scene holds the terms its run computed.
struct ScoreTerms {
    std::vector<MatrixD> beforeScale;
    std::vector<MatrixD> afterScale;
    bool empty() const { return beforeScale.empty() && afterScale.empty(); }
    bool operator==(const ScoreTerms& o) const {
        return beforeScale == o.beforeScale && afterScale == o.afterScale;
    }
};

struct Scale {
    ScaleKind kind = ScaleKind::SqrtDk;
    double divisor = 1.0;  // only for ScaleKind::Divisor
};

struct Scene {
    std::string title;
    std::vector<std::string> tokens;
    MatrixD embeddings;  // Lq x dModel
    bool hasSource = false;
    std::vector<std::string> sourceTokens;
    MatrixD sourceEmbeddings;  // Lk x dModel
    Positional positional;
    LayerNorm norm;
    Projections projections;
    std::optional<InitSpec> init;  // where the numbers came from, if they were drawn
    int heads = 1;
    // Version 2: grouped-query attention. Absent: every head has its own K and V (kvHeads =
    // heads); present, it differs from heads, divides it, and needs separate projections.
    std::optional<int> kvHeads;
    HeadNorm qkNorm;  // version 2: RMSNorm of Q and K, per head or full width
    // Version 2: a logit soft-cap (Gemma 2): the scaled scores become cap·tanh(x/cap) before the
    // mask; the engine keeps both (the capped stage).
    std::optional<double> softCap;
    ScoreTerms scoreTerms;                 // version 2: relative-position terms on the scores
    std::optional<RopeParameters> rotary;  // version 2: rotary positions on each head's Q and K
    // Version 2: heads switched off (issue 16). Each listed head's context (weights·V, Lq x dHead)
    // is replaced before the output projection, by zeros or by its mean over the query rows.
    struct Ablation {
        std::vector<int> heads;  // distinct, each in [0, heads)
        bool byMean = false;     // false: zeros
        bool operator==(const Ablation& o) const { return heads == o.heads && byMean == o.byMean; }
    };
    Ablation ablation;
    Mask mask;
    double maskFill = -std::numeric_limits<double>::infinity();
    Scale scale;
    std::string viewJson;  // free-form window state, kept verbatim (a JSON object text)

    int queryCount() const { return static_cast<int>(embeddings.rows()); }
    int keyCount() const {
        return hasSource ? static_cast<int>(sourceEmbeddings.rows()) : queryCount();
    }
    int dModel() const { return static_cast<int>(embeddings.cols()); }
    int dProj() const;
    int dHead() const { return dProj() / heads; }
    int keyValueHeads() const { return kvHeads.value_or(heads); }
    int dKeyValue() const { return keyValueHeads() * dHead(); }  // columns of K and V
    // The kv head query head h reads (Hugging Face's repeat_kv).
    int keyValueHeadOf(int h) const { return h / (heads / keyValueHeads()); }
    // Whether the scene needs format version 2 (an RMSNorm, kv heads, q/k norm, rotary, ablated
    // heads, a soft-cap or score terms).
    bool usesVersion2() const;
    int dOut() const {
        return projections.hasOutput ? static_cast<int>(projections.output.cols()) : 0;
    }
    // The number the scaled scores are divided by, from `scale` and the shapes.
    double divisor() const;
    const std::vector<std::string>& keyTokens() const { return hasSource ? sourceTokens : tokens; }
};

// The combined mask, Lq x Lk: causal AND window AND NOT padding AND allowed.
BoolMatrix allowedMatrix(const Mask& mask, int queryCount, int keyCount);

// Throws SceneError unless `scene` can have `heads` heads: it must divide dProj; a grouped-query
// layer (K and V hold kvHeads heads of dHead columns) and a q/k norm (weights of dHead values) keep
// their head count; rotary positions need an even dHead.
void checkHeadCount(const Scene& scene, int heads);
// The same as a question: whether checkHeadCount(scene, heads) passes.
bool headCountAllowed(const Scene& scene, int heads);

}  // namespace ae

namespace ae {
// The size rule (docs/errors.md, "Size limits"): before anything the size of a layer is built
// (an engine, a trainer, an export, the window's copy of a scene), its memory is estimated from
// the scene's shapes and compared with this machine's physical memory; a layer that would not fit
// is refused with both figures, before any of that memory is allocated.

// Bytes of the scene's own matrices in double: embeddings, source, learned positions, norm,
// projections and biases, and the allowed-mask (one byte a cell). Token texts are not counted.
double sceneBytes(const Scene& scene);
// Bytes AttentionEngine<Scalar> holds after a full pass over `scene`, with sizeof(Scalar) =
// `scalarSize`: its copy of the scene (sceneBytes), the weights converted to Scalar (absent biases
// as zeros), the mask as bools and as two Scalar arrays (Lq x Lk each), X (and X_s), Q, K (only
// when it is not Q itself), V, heads x (scores, scaled, weights), concat and output. Exact to
// the element: AttentionEngine::heldBytes() counts the same matrices after compute().
double engineBytes(const Scene& scene, int scalarSize);
// engineBytes() of a self-attention scene that does not exist yet, from its sizes alone: separate
// projections with zero biases (as drawProjections makes them), an output projection dProj x dOut
// (dOut = 0: none), no positions, norm or mask. For paths that would otherwise have to allocate the
// scene to measure it (bench).
double selfAttentionEngineBytes(double length, double dModel, double dProj, double heads,
                                double dOut, int scalarSize);
// What the window holds for `scene`: two float engines (the one shown and the one a large scene
// is computed in off the GUI thread), the document's own copy of the scene and the two the undo
// step that brings it in keeps (before and after). The heatmaps are pooled to their pixels, so
// they do not grow with the scene.
double windowBytes(const Scene& scene);
// Physical memory of this machine in bytes (0 if unknown).
double physicalMemoryBytes();
// The one check every path goes through: throws SceneError("scene", "too large: needs about
// 61.2 GiB (<what>), this machine has 23.4 GiB") if `bytes` exceed the physical memory.
void checkFitsInMemory(double bytes, const std::string& what);
// checkFitsInMemory(engineBytes(scene, scalarSize) * (1 + extraBytesPerNumber / scalarSize)):
// `extraBytesPerNumber` per number of the result on top (e.g. its text when exported).
void checkFitsInMemory(const Scene& scene, int scalarSize, double extraBytesPerNumber = 0);
// The GiB figure the messages show, with one decimal ("61.2 GiB").
std::string gibibytesText(double bytes);
}  // namespace ae
