#pragma once
// Whole transformer models: the families a Hugging Face model folder may hold (the family
// table, core/model/family.h), their weights as they lie in a memory-mapped file, and the forward
// pass that keeps what the explorer shows: per layer the residual input, and per head q, k, v,
// scores and weights; then the logits (decoders) or the last hidden state (bert).
//
// The specification is shared/reference/model_reference.py (PyTorch, float64): what it accepts
// and refuses, this accepts and refuses, and its result JSON is what io/model/model_result.h
// writes. No Qt here: io/model/model_folder.h reads config.json and the safetensors files into a
// Model.
//
// Weights are never copied at open: a TensorRef points into the mapped file. A layer reads its
// weights when it runs; those already stored as the compute type (F32 in a float run, F64 in a
// double one) are used in place, the others are converted for that layer only and dropped after
// it (docs/models.md, "Memory", has the measurements behind that choice).
//
// Dimension names are those of core/dimensions.h, in their short forms: T, d, H, KV, hd, V, I.

#include <Eigen/Core>
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/family.h"
#include "core/model/layer_digest.h"
#include "core/ops.h"
#include "core/tensor_data.h"

namespace ae::model {

// A model folder, config or input the engine refuses: one line naming the file, the field or
// tensor, and the shapes or values involved.
class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A pass stopped between layers because RunOptions::afterLayer asked it to.
class RunCancelled : public std::runtime_error {
public:
    RunCancelled() : std::runtime_error("the run was cancelled") {}
};

// As config.json's model_type spells it.
const char* familyName(Family family);

// GeluFast: FastGELUActivation, the tanh form with the constant 0.7978845608 (GPT-NeoX-20B's
// "gelu_fast").
// Tanh: DeBERTa's ConvLayer only (conv_act's default).
enum class Activation { GeluExact, GeluTanh, GeluFast, Silu, Relu, Tanh };

// What config.json says, with Hugging Face's defaults filled in (io/model/model_folder.cpp).
struct Config {
    Family family = Family::Gpt2;
    // Encoder–decoder families (Stacks::EncoderDecoder): which stack these numbers describe.
    // config.json is read once into the encoder's (layers, heads, intermediate; the decoder's in
    // the decoder* fields below) and stackConfig makes each stack's Config from it.
    enum class Stack { Only, Encoder, Decoder };
    Stack stack = Stack::Only;
    int hidden = 0;  // d
    int layers = 0;
    int heads = 0;         // query heads
    int kvHeads = 0;       // key/value heads (GQA); = heads for gpt2 and bert
    int headDim = 0;       // hd; heads·hd may differ from d (llama with head_dim, qwen3)
    int vocab = 0;         // V
    int intermediate = 0;  // the MLP's width
    int positions = 0;     // rows of the learned position table (gpt2, bert); 0: rotary, no limit
    int tokenTypes = 0;    // bert's token-type table rows
    // The padding token that numbers the positions (PositionKind::LearnedAfterPadding), else −1.
    long long paddingIdx = -1;
    Activation activation = Activation::GeluTanh;
    double normEps = 1e-5;
    bool scaleAttentionWeights = true;  // gpt2: divide scores by √hd
    bool scaleByInverseLayer = false;   // gpt2: and by (layer + 1)
    bool tieWordEmbeddings = true;      // LM head = the token table
    bool attentionBias = false;         // q, k and v biases where the family's are optional
    bool outputBias = false;            // the output projection's bias where optional
    bool mlpBias = false;               // gate, up, down biases where optional
    ops::RopeParameters rope;  // rotary positions (rotaryDim set when only part of a head turns)
    // Rotary positions by layer: the config's `rope`, `localRope` (Gemma 3's sliding layers:
    // rope_local_base_freq, unscaled) or none (SmolLM3's NoPE layers). Empty: every layer `rope`.
    enum class LayerRotary { Global, Local, None };
    std::vector<LayerRotary> layerRotary;
    ops::RopeParameters localRope;
    // LongRope (Phi-3): a run whose last position + 1 exceeds rope.originalMaxPositions turns by
    // the long factors, any other by the short ones; rotaryDim/2 values each.
    std::vector<double> shortRopeFactors, longRopeFactors;
    // Sliding windows by layer: in a decoder key j is visible to query i when i − j < W (and
    // j <= i), in an encoder when |i − j| < W (ModernBERT's local layers: W = local_attention / 2
    // + 1); 0: no window. Empty: no layer slides.
    std::vector<int> slidingWindows;
    double attentionSoftCap = 0;  // scaled scores become cap·tanh(x/cap) (Gemma 2); 0: none
    double finalSoftCap = 0;      // the same on the logits; 0: none
    double queryScalar = 0;       // query_pre_attn_scalar: scores scaled by its −½; 0: by hd's
    double embeddingScale = 0;    // token embeddings times this (Gemma: √d); 0: not scaled
    // Where the norms sit when the config decides it (GPT-NeoX's use_parallel_residual), over the
    // row's placement.
    std::optional<NormPlacement> placement;
    // Which norm, when the config decides it (ModernBERT's norm_bias), over the row's.
    std::optional<NormType> norm;
    // Which positions, when the config decides it (DeBERTa's position_biased_input), over the
    // row's.
    std::optional<PositionKind> positionKind;
    // Which MLP, when the config decides it (T5's feed_forward_proj "gated-…"), over the row's.
    std::optional<MlpKind> mlpKind;
    // ScoreTermKind::Disentangled (DeBERTa-v2): which terms (pos_att_type with
    // relative_attention), where the position keys and queries come from (share_att_key: the
    // layer's own key and query projections), how relative positions are bucketed (log buckets
    // when position_buckets > 0) and how far they reach: the table has 2·span rows.
    struct DisentangledAttention {
        bool contentToPosition = false;
        bool positionToContent = false;
        bool shareKeys = false;
        int buckets = 0;
        int maxRelative = 0;
        int span = 0;
        bool normEmbeddings = false;  // norm_rel_ebd "layer_norm": the table LayerNorm'ed
        bool any() const { return contentToPosition || positionToContent; }
    };
    DisentangledAttention disentangled;
    // Scores scaled by 1/√(hd·factor) (DeBERTa's scale_factor: 1 + the number of terms).
    double attentionScaleFactor = 1.0;
    // The embeddings' width when it is not d (DeBERTa's embedding_size: projected by embed_proj).
    int embeddingSize = 0;
    int embeddingWidth() const { return embeddingSize > 0 ? embeddingSize : hidden; }
    // DeBERTa-v2-xlarge's ConvLayer after layer 0 (conv_kernel_size > 0): its kernel, groups and
    // activation.
    int convKernel = 0;
    int convGroups = 1;
    Activation convActivation = Activation::Tanh;
    // The masked-LM head (encoders), when the folder holds one: its activation and norm's eps,
    // which biases it stores, and DeBERTa's `legacy` choice of head. activationProblem: why the
    // config's activation for the head cannot run, refused only when the head is stored.
    struct MaskedLmHeadConfig {
        Activation activation = Activation::GeluExact;
        double normEps = 1e-12;
        std::string activationProblem;
        bool denseBias = true;
        bool normBias = true;
        bool decoderBias = true;
        bool legacy = true;
    };
    MaskedLmHeadConfig maskedLm;
    // ScoreTermKind::BucketBias: the buckets of relative positions (of which HF reads the first
    // relativeBucketsUsed, however many the table has) and the distance the last one starts at.
    int relativeBuckets = 0;
    int relativeBucketsUsed = 0;
    int relativeMaxDistance = 0;
    // DistilBERT's sinusoidal_pos_embds: a folder that stores no position table gets the fixed
    // sinusoids HF's init computes (a stored table is used as it is).
    bool sinusoidalPositionTable = false;
    // bos_token_id (gpt2 and llama's defaults when absent), or -1: none, or not an id of the
    // vocabulary. What `heads --induction-random` puts before its random tokens.
    long long bosToken = -1;
    // Encoder–decoder models: the decoder stack's layers, heads and MLP width; the token that
    // starts every decoder input (decoder_start_token_id) and the one that ends generation
    // (eos_token_id), each −1 when the config has none.
    int decoderLayers = 0;
    int decoderHeads = 0;
    int decoderHeadDim = 0;
    int decoderIntermediate = 0;
    // Marian with share_encoder_decoder_embeddings false: each stack reads its own token table.
    bool shareStackEmbeddings = true;
    // transformers 5's T5 (a config.json with scale_decoder_outputs): a stored lm_head.weight is
    // the head even when tied; without one the head is the token table.
    bool storedLmHeadWins = false;
    long long decoderStartToken = -1;
    long long eosToken = -1;
    // The final hidden state times this before the LM head (T5's d_model^−½ when the model
    // rescales, from Mesh TensorFlow); 1: not scaled.
    double logitScale = 1.0;
    // Rows of the learned position table before position 0's (BART's offset 2).
    int positionRowOffset = 0;
    // How the computed sinusoid table (sinusoidalPositionTable) lays out its columns:
    // DistilBERT's interleaves sin (even columns) and cos (odd ones); Marian's puts the sines in
    // the first half and the cosines in the second.
    enum class SinusoidLayout { Interleaved, SplitHalves };
    SinusoidLayout sinusoidLayout = SinusoidLayout::Interleaved;

    Architecture architecture() const {
        Architecture a = familyRow(family).architecture;
        if (a.stacks == Stacks::EncoderDecoder) a.decoder = stack == Stack::Decoder;
        if (placement) a.placement = *placement;
        if (norm) a.norm = *norm;
        if (positionKind) a.positions = *positionKind;
        if (mlpKind) a.mlp = *mlpKind;
        return a;
    }
    bool isDecoder() const { return architecture().decoder; }
    bool isEncoderDecoder() const {
        return familyRow(family).architecture.stacks == Stacks::EncoderDecoder;
    }
    // A decoder stack of an encoder–decoder model: each layer has a cross-attention sub-block.
    bool hasCrossAttention() const { return isEncoderDecoder() && stack == Stack::Decoder; }
    bool rotary() const { return architecture().positions == PositionKind::Rotary; }
    // The window of layer `layer` (0: none).
    int slidingWindow(int layer) const {
        return slidingWindows.empty() ? 0 : slidingWindows[static_cast<std::size_t>(layer)];
    }
    // Layer `layer`'s rotary positions in a run whose positions end before `positionsEnd`, or
    // nullopt when the layer does not turn q and k.
    std::optional<ops::RopeParameters> layerRope(int layer, long long positionsEnd) const;
    int kvHeadOf(int head) const { return head / (heads / kvHeads); }
    // The factor scores are multiplied by before the softmax, in layer `layer` (from 0).
    double attentionScale(int layer) const;
};

// One stored tensor: where its bytes lie in a mapped file, as rows x cols (a vector is 1 x n).
struct TensorRef {
    std::string name;  // as stored, with its prefix
    std::string file;  // the file holding it, for messages
    DType dtype = DType::F32;
    long long rows = 0, cols = 0;
    const unsigned char* data = nullptr;  // little-endian, not necessarily aligned

    bool present() const { return !name.empty(); }
    long long count() const { return rows * cols; }
    double bytes() const { return static_cast<double>(count()) * dtypeSize(dtype); }
};

// Each family fills the slots it has. Layouts: gpt2's Conv1D weights are [in, out] (y = x·W + b);
// every other projection is nn.Linear's [out, in] (y = x·Wᵀ + b).
struct LayerWeights {
    // gpt2: ln_1 / ln_2 (pre-norm). bert: attention.output.LayerNorm / output.LayerNorm (post).
    // llama: input_layernorm / post_attention_layernorm (RMS, no bias).
    TensorRef norm1, norm1Bias, norm2, norm2Bias;
    TensorRef qkv, qkvBias;                                      // gpt2 c_attn [d, 3d]
    TensorRef query, queryBias, key, keyBias, value, valueBias;  // bert, llama
    TensorRef output, outputBias;  // gpt2 c_proj [d, d]; bert attention.output.dense; llama o_proj
    TensorRef queryNorm, keyNorm;  // qwen3, gemma3 [hd]; olmo2 [heads·hd] and [kvHeads·hd]
    // Norms on a block's output before its residual add: Gemma 2's post_attention_layernorm and
    // post_feedforward_layernorm (norm2 is then pre_feedforward_layernorm), OLMo 2's.
    TensorRef attentionOutputNorm, mlpOutputNorm;
    // gpt2: up = c_fc [d, I], down = c_proj [I, d]. bert: up = intermediate, down = output.dense.
    // llama: gate, up, down. phi3: gateUp [2I, d], gate rows first (ModernBERT's Wi, with a bias).
    TensorRef gate, gateBias, up, upBias, down, downBias, gateUp, gateUpBias;
    // DeBERTa without share_att_key: pos_key_proj and pos_query_proj [d, d] with biases.
    TensorRef positionKey, positionKeyBias, positionQuery, positionQueryBias;
    // A decoder stack's cross-attention (Config::hasCrossAttention): q from the decoder, k and v
    // from the encoder's output, nn.Linear's layout (biases where the family has them), its
    // output projection, and the norm before it (pre-norm) or after its residual add (post-norm).
    TensorRef crossQuery, crossQueryBias, crossKey, crossKeyBias, crossValue, crossValueBias,
        crossOutput, crossOutputBias, crossNorm, crossNormBias;
};
struct ModelWeights {
    TensorRef tokenEmbedding;                    // V x d
    TensorRef positionEmbedding;                 // gpt2, bert: positions x d
    TensorRef tokenTypeEmbedding;                // bert: types x d
    TensorRef embeddingNorm, embeddingNormBias;  // bert
    TensorRef finalNorm, finalNormBias;          // gpt2 ln_f, llama norm
    TensorRef lmHead;                            // decoders, V x d (= tokenEmbedding when tied)
    TensorRef logitsBias;    // [1, V] added to the logits (BART's final_logits_bias); absent: none
    TensorRef relativeBias;  // ScoreTermKind::BucketBias: buckets x H, shared by every layer
    // DeBERTa: embed_proj [d, E]; rel_embeddings [2·span, d] and its LayerNorm; the ConvLayer's
    // Conv1d [d, d/groups · kernel] (stored [d, d/groups, kernel]), its bias and LayerNorm.
    TensorRef embeddingProjection, relativeEmbeddings, relativeEmbeddingsNorm,
        relativeEmbeddingsNormBias, conv, convBias, convNorm, convNormBias;
    std::vector<LayerWeights> layers;
    // Encoders' masked-LM head, when the folder holds it (MaskedLmHeadNames): logits =
    // norm(act(dense(lastHidden)))·decoderᵀ + decoderBias. dense [E, d], norm [E], decoder
    // [V, E] (the token table when tied), decoderBias [V]; absent biases add nothing.
    TensorRef maskedLmDense, maskedLmDenseBias, maskedLmNorm, maskedLmNormBias, maskedLmDecoder,
        maskedLmDecoderBias;
    bool hasMaskedLmHead() const { return maskedLmDense.present(); }
};

// Where a family's masked-LM head lies (BertForMaskedLM's cls.predictions and its kin). Its
// names are top-level, never under the base model's prefix; shapes follow the config (dense
// [denseOut, d], norm [denseOut], decoder [V, denseOut], biases [V]).
struct MaskedLmHeadNames {
    // The folder holds the head when a stored name starts with one of these; a head stored only
    // in part is refused (transformers would initialize the rest at random).
    std::vector<std::string> marks;
    std::string dense;  // "cls.predictions.transform.dense"
    long long denseOut = 0;
    bool denseBias = true;
    std::string norm;  // its LayerNorm; the legacy gamma / beta names are accepted
    bool normBias = true;
    // The decoder: its weight is the token table when tie_word_embeddings (a stored copy must
    // hold the same values), else stored. Empty: always the token table (DeBERTa's lm_predictions).
    std::string decoder;
    // Shared: the head's own bias (headBias) and decoder.bias are one parameter in transformers 4
    // and tied by name in 5: either name when tied, decoder.bias when untied; both stored must
    // agree. Decoder: decoder.bias only. Head: headBias only. None: no bias.
    enum class Bias { None, Shared, Decoder, Head };
    Bias bias = Bias::Shared;
    std::string headBias;
    // Names that are the masked-LM head's unless the folder holds a stored name starting with
    // classifierMark: ModernBERT's head.* is also the head of its sequence and token classifiers
    // (with classifier.*), which have no decoder.
    std::vector<std::string> marksUnlessClassifier;
    std::string classifierMark;
};

// A tensor the family needs: its name after the prefix (or at the top level), an older name it
// may have instead, its shape, and the slot it fills.
struct TensorSpec {
    std::string name;
    std::string alias;  // e.g. LayerNorm.gamma for LayerNorm.weight; empty: none
    std::vector<long long> shape;
    bool topLevel = false;  // lm_head.weight: never prefixed
    TensorRef* slot = nullptr;
    bool optional = false;  // may be absent: the slot then stays empty
    // Other names of the same parameter (T5's shared.weight is also encoder.embed_tokens.weight
    // and decoder.embed_tokens.weight; a tied lm_head.weight): the first of name, alias and these
    // that is stored is read, and every other one stored must hold the same values (else refused
    // with `why`, which says what transformers would do).
    struct StoredCopy {
        std::string name;
        bool topLevel = false;
        std::string why;        // after "COPY differs from NAME"
        bool mayBeRead = true;  // false: only compared (a tied lm_head.weight), never read
    };
    std::vector<StoredCopy> copies;
    // Said after "missing tensor NAME (expected SHAPE)" when the tensor is required.
    std::string whyRequired;
};
// Every tensor `config` needs, in a fixed order, with slots in `weights` (its layers are sized
// here): the family row's names. The tied LM head is not listed: the caller points it at the
// token table.
std::vector<TensorSpec> tensorSpecs(const Config& config, ModelWeights& weights);

struct Model {
    Config config;
    ModelWeights weights;
    // Tensors the model computes rather than stores (DistilBERT's sinusoid table), F32, which
    // TensorRefs in `weights` point into; shared so a copied Model keeps them alive.
    std::vector<std::shared_ptr<const std::vector<float>>> computedTensors;
    // Weights edited in the explorer (core/model/edited_model.h), F64, likewise pointed into.
    std::vector<std::shared_ptr<const std::vector<double>>> editedTensors;
    std::string folder;      // for messages
    double storedBytes = 0;  // every weight tensor the model reads, as stored
    // An encoder–decoder model (Config::isEncoderDecoder): `config` and `weights` above are the
    // encoder stack's, this the decoder stack's (its own config, layers with cross-attention and
    // the LM head; its storedBytes 0, the folder's counted above). Shared so a copied Model is
    // cheap; an edit of the decoder's weights copies it first.
    std::shared_ptr<const Model> decoder;
};

// The Model of the stack a run was made on (the run's config's stack): model.decoder for a
// decoder stack's run (an EncoderDecoderRun's decoder), else `model` itself.
inline const Model& stackOf(const Model& model, const Config& runConfig) {
    return runConfig.stack == Config::Stack::Decoder && model.decoder ? *model.decoder : model;
}

// The Config of one stack of an encoder–decoder model, from the one config.json gives (its
// stack Only or Encoder): the encoder's as it is, the decoder's with its layers, heads and MLP
// width, causal. Other models: `config` itself.
Config stackConfig(const Config& config, Config::Stack stack);

// ---- Running ----

template <typename Scalar>
using Matrix = ops::RowMajorMatrix<Scalar>;

// Switching a head off (`run --ablate`): its context (weights·v, T x hd) is replaced
// before the output projection, by zeros or by its own mean over positions (every row the mean
// row). The one-layer engine does the same to a scene's ablated heads (core/ops.h).
enum class AblationMode { Zero, Mean };
struct HeadAblation {
    int layer = 0;
    int head = 0;
    bool operator==(const HeadAblation& o) const { return layer == o.layer && head == o.head; }
};

struct RunOptions {
    std::vector<int> attentionMask;  // empty, or one 0/1 a token (1 attend, 0 padding)
    // Empty, or one sentence id a token (token_type_ids: 0 for text A, 1 for text B), for the
    // families with a token-type table; none given reads row 0.
    std::vector<int> tokenTypes;
    int positionOffset = 0;               // position of the first token
    std::vector<HeadAblation> ablations;  // heads switched off; each layer/head in range
    AblationMode ablationMode = AblationMode::Zero;
    // Decoders: every position's logits (result files), or the last position's only (the
    // window, which shows one position's predictions at a time). The LM head is V x d: with
    // GPT-2's 50257 tokens, all T rows cost about as much as the twelve layers together.
    bool logitsForEveryPosition = true;
    // Which layers keep every head's scores and weights (T x T each, the bulk of a long run:
    // 34 GB for an 8B model at L = 2048). Every: all of them. Chosen: only mapLayers (possibly
    // none); the others' maps are computed, since their context needs them, and dropped, and
    // recomputeLayerMaps gives them back exactly from the layer's kept residual input.
    enum class KeptMaps { Every, Chosen };
    KeptMaps keptMaps = KeptMaps::Every;
    std::vector<int> mapLayers;
    // Called on the pass's thread after each layer with the number of layers done (from the
    // first layer the pass runs); returning false stops the pass there (it throws RunCancelled).
    // The window's progress and Cancel, which stop a long pass between layers.
    std::function<bool(int layersDone)> afterLayer;
    // With keepDigest: called on the pass's thread with each layer's digest as the layer
    // finishes (before afterLayer), so a view can fill in while a long pass runs.
    std::function<void(int layer, const LayerDigest& digest)> digestReady;
    // Keep each layer's digest (layer_digest.h: summaries, pooled maps, the weights' sum over
    // heads), computed head by head as the pass makes the maps, so views need no full maps.
    bool keepDigest = false;
    // On a text repeated twice (head_scores.h): the digests measure the scores that need it
    // (induction) too.
    RepeatedText repeated;
    // The positions of the separator tokens ([SEP], </s>; from the tokenizer): what the to-[SEP]
    // score measures. Empty: none (the score is NaN).
    std::vector<int> separators;
    bool keepsMapsOf(int layer) const {
        return keptMaps == KeptMaps::Every ||
               std::find(mapLayers.begin(), mapLayers.end(), layer) != mapLayers.end();
    }
};

// A decoder layer's cross-attention in an encoder–decoder model: S decoder rows query the T
// encoder rows. Every head's own columns, as in LayerRecord.
template <typename Scalar>
struct CrossRecord {
    // S x d: the decoder's stream entering the cross-attention (after the self-attention's
    // residual step, and its norm in a post-norm stack), and what the queries are projected from
    // (that stream normed by the cross-attention's norm in a pre-norm stack; the same otherwise).
    Matrix<Scalar> hiddenIn;
    Matrix<Scalar> queryInput;
    Matrix<Scalar> query;                 // S x (heads·hd), from queryInput
    Matrix<Scalar> key;                   // T x (heads·hd), from the encoder's output
    Matrix<Scalar> value;                 // T x (heads·hd)
    std::vector<Matrix<Scalar>> scores;   // per head, S x T: q·kᵀ before the scale and the mask
    std::vector<Matrix<Scalar>> weights;  // per head, S x T: the softmax; padding keys exactly 0
    bool empty() const { return query.size() == 0; }
};

template <typename Scalar>
struct LayerRecord {
    Matrix<Scalar> hiddenIn;  // T x d: the residual stream entering the layer
    Matrix<Scalar> query;  // T x (heads·hd): after bias, q-norm and rotation; head h = cols h·hd
    Matrix<Scalar> key;    // T x (kvHeads·hd), after k-norm and rotation
    Matrix<Scalar> value;  // T x (kvHeads·hd)
    // The kv heads of key and value when they are not the config's: a what-if layer regrouped in
    // the explorer (another number of kv heads) flows forward with its own K and V. 0: the
    // config's.
    int keyValueHeads = 0;
    // Empty when the run did not keep this layer's maps (RunOptions::keptMaps; recomputeLayerMaps).
    std::vector<Matrix<Scalar>> scores;   // per head, T x T: q·kᵀ before scaling, terms, masking
    std::vector<Matrix<Scalar>> weights;  // per head, T x T: the softmax; hidden keys exactly 0
    // DeBERTa, with the maps: per head, T x T, the content-to-position and position-to-content
    // scores added to q·kᵀ before the scale (empty when the model has no such term).
    std::vector<Matrix<Scalar>> contentToPosition, positionToContent;
    bool hasMaps() const { return !weights.empty(); }
    LayerDigest digest;         // empty unless RunOptions::keepDigest
    CrossRecord<Scalar> cross;  // a decoder stack's cross-attention; else empty
};

template <typename Scalar>
struct ModelRun {
    Config config;
    std::vector<long long> tokens;
    std::vector<int> attentionMask;  // empty: none given
    RunOptions options;              // as the run was made
    // Set by resumeAfterAttention: a layer's record came from outside (an edited scene), so the
    // run is not the model's on its tokens, and rerunModel never reuses it.
    bool whatIf = false;
    std::vector<LayerRecord<Scalar>> layers;
    // Decoders: rows logitsFrom.. of the T x V logits (every position unless the run was asked
    // for the last only, RunOptions::logitsForEveryPosition), and the final-normed hidden state
    // they come from (T x d), so that logitsAt gives any other position's row.
    Matrix<Scalar> logits;
    long long logitsFrom = 0;
    Matrix<Scalar> finalHidden;
    Matrix<Scalar> lastHidden;  // bert: T x d
    // Encoders whose folder holds the masked-LM head: T x V, every position.
    Matrix<Scalar> maskedLmLogits;
    // ScoreTermKind::BucketBias (MPNet): per head, T x T, the relative position bias every layer
    // adds to its scaled scores. Empty for other families.
    std::vector<Matrix<Scalar>> positionBias;

    // Head h's views (k and v: of the kv head it reads), T x hd.
    auto q(int layer, int head) const {
        return layers[layer].query.middleCols(head * config.headDim, config.headDim);
    }
    auto k(int layer, int head) const {
        return layers[layer].key.middleCols(kvHeadOf(layer, head) * config.headDim, config.headDim);
    }
    auto v(int layer, int head) const {
        return layers[layer].value.middleCols(kvHeadOf(layer, head) * config.headDim,
                                              config.headDim);
    }
    // The kv head that `head` reads in `layer`: the config's grouping unless the layer has its own.
    int kvHeadOf(int layer, int head) const {
        const int kvHeads = layers[layer].keyValueHeads;
        return kvHeads > 0 ? head / (config.heads / kvHeads) : config.kvHeadOf(head);
    }
};

// An encoder–decoder model's pass: the encoder over the source ids, then the decoder over the
// decoder ids (teacher forced: logits row t predicts the token after decoderTokens[0..t]).
template <typename Scalar>
struct EncoderDecoderRun {
    // The encoder stack's run: tokens, its layers, and in lastHidden (T x d) the encoder's output,
    // what every cross-attention reads (T5: after its final norm; BART, Marian: the last layer's).
    ModelRun<Scalar> encoder;
    // The decoder stack's run: its tokens are the decoder ids, each layer holds its
    // cross-attention (LayerRecord::cross), and logits are S x V.
    ModelRun<Scalar> decoder;
};

// The whole encoder–decoder pass. options.attentionMask is the encoder's padding: it hides
// padding keys from the encoder's self-attention and from every cross-attention; the decoder is
// causal only, as Hugging Face's without decoder_attention_mask. Refused, naming what: a model
// that is not encoder–decoder, no decoder ids, token types, a position offset, switched-off heads
// (not yet), a mask of no 1, ids outside a vocabulary, more tokens than a stack's positions, and
// a pass that would not fit in memory.
template <typename Scalar>
EncoderDecoderRun<Scalar> runEncoderDecoder(const Model& model, const std::vector<long long>& ids,
                                            const std::vector<long long>& decoderIds,
                                            const RunOptions& options = {});

// Greedy decoding: from decoder_start_token_id, the decoder input grows by the argmax of the last
// row's logits until eos_token_id is produced or `maxNewTokens` were added. Returns the decoder
// ids (the start token first, the EOS last when produced). `step`, when given, is called with the
// ids so far after each token; returning false stops there (the window's Cancel).
template <typename Scalar>
std::vector<long long> generateGreedy(
    const Model& model, const std::vector<long long>& ids, int maxNewTokens,
    const RunOptions& options = {},
    const std::function<bool(const std::vector<long long>& decoderIds)>& step = {});

// Refuses a family whose architecture has an axis the forward pass does not implement, naming it:
// "FAMILY: not implemented: norm placement: sandwich".
void checkImplemented(const Config& config);

// The row of the learned position table each of ids[firstRow..] reads: its index after
// `offset` (PositionKind::Learned), or its number among the non-padding ids after paddingIdx,
// paddingIdx itself at a padding id (LearnedAfterPadding, which takes no offset).
std::vector<long long> learnedPositions(const Config& config, const std::vector<long long>& ids,
                                        int offset, long long firstRow = 0);

// Refuses ids outside the vocabulary, a text longer than a learned position table, a mask of
// the wrong length or values, and a query that would see no key (left padding in a decoder).
void checkInputs(const Config& config, const std::vector<long long>& ids,
                 const RunOptions& options);

// The memory rule (docs/errors.md, "Whole models"): a run needs the weights as stored (mapped,
// so their pages count once they are read), plus the largest layer's weights converted to the
// compute type if they are stored in another (a layer is converted as it runs, then dropped),
// plus everything kept (every layer's residual input, q, k, v, scores and weights, and the
// logits or last hidden state) and the working buffers of one layer.
struct RunMemory {
    double storedWeights = 0;
    double convertedLayer = 0;
    double kept = 0;  // bytes of the kept matrices
    double working = 0;
    double keptNumbers = 0;  // numbers in the kept matrices (a result file writes each)
    double total() const { return storedWeights + convertedLayer + kept + working; }
};
// `layersWithMaps`: how many layers keep their maps (-1: every layer); a layer whose maps are
// dropped still holds one head's weights at a time per thread while it runs. `withDigests`:
// every layer keeps its digest (RunOptions::keepDigest).
RunMemory runMemory(const Model& model, long long tokens, int scalarSize, int layersWithMaps = -1,
                    bool withDigests = false);
// The memory runEncoderDecoder needs on T source and S decoder tokens (as runMemory: the weights
// as stored, the largest layer converted, both stacks' kept matrices with the cross-attention's,
// one layer's work).
RunMemory encoderDecoderRunMemory(const Model& model, long long sourceTokens,
                                  long long decoderTokens, int scalarSize);

// Throws ModelError("FOLDER: too large: needs about 61.2 GiB (what), this machine has 23.4 GiB")
// when `bytes` exceed `available` (physicalMemoryBytes() when negative).
void checkRunFitsInMemory(const Model& model, double bytes, const std::string& what,
                          double available = -1);

// The forward pass on one sequence: checkInputs, the memory check (runMemory, plus nothing for
// the caller's result file: callers writing one check themselves first), then every layer.
// Scalar is float or double. A result that overflows (a non-finite hidden state) is refused,
// naming the layer.
template <typename Scalar>
ModelRun<Scalar> runModel(const Model& model, const std::vector<long long>& ids,
                          const RunOptions& options = {});

// A what-if in one layer flowing forward. The caller has recomputed layer `layer`'s
// attention sub-block itself (the one-layer engine on the layer's scene, possibly edited) and
// stored its q, k, v, scores and weights in run.layers[layer]. `residualIn` (T x d) is the
// residual stream entering the layer as the scene has it (its embeddings, possibly edited; it
// replaces run.layers[layer].hiddenIn), `attentionOut` (T x d) the sub-block's output after the
// output projection and its bias. This finishes layer `layer` (residual add, and bert's norm; the
// MLP) and recomputes every later layer and the logits or last hidden state in `run`, with
// `options` (the run's mask, ablations in later layers). Layers before `layer` are untouched.
template <typename Scalar>
void resumeAfterAttention(const Model& model, ModelRun<Scalar>& run, int layer,
                          const Matrix<Scalar>& residualIn, const Matrix<Scalar>& attentionOut,
                          const RunOptions& options = {});

// The forward pass on `ids` again after an edit, for a decoder: `previous` is a run of this model
// (runModel or rerunModel, not a what-if) and `options` match its ablations and position offset.
// The first P positions where previous.tokens and ids agree (P = reusablePrefix, at most T − 1)
// see exactly the keys they saw before, since no row sees a later key, so their rows of every
// layer are taken from `previous`; only rows P..T−1 run again (and the scores of the first P
// queries against the new keys). Typing at the end of a text then costs its new tokens, as a KV
// cache does. The numbers agree with runModel's to rounding (the products are smaller, so summed
// in another order); with no reusable prefix (bert, padding, mean ablation, an edit at 0) this is
// runModel.
template <typename Scalar>
ModelRun<Scalar> rerunModel(const Model& model, const ModelRun<Scalar>& previous,
                            const std::vector<long long>& ids, const RunOptions& options = {});
// P above: 0 when nothing can be reused.
template <typename Scalar>
long long reusablePrefix(const Model& model, const ModelRun<Scalar>& previous,
                         const std::vector<long long>& ids, const RunOptions& options = {});

// Layer `layer`'s scores and weights, every head, into run.layers[layer]: recomputed from the
// layer's kept residual input (hiddenIn) by the same code as the pass, so bit for bit what a run
// keeping every map holds. For a run that kept only some maps (RunOptions::keptMaps), when a view
// or an export asks for a layer. A layer that kept its maps (a what-if's edited layer always
// does: they are the caller's, not the model's) is left as it is. Throws ModelError for a layer
// out of range.
template <typename Scalar>
void recomputeLayerMaps(const Model& model, ModelRun<Scalar>& run, int layer);
// The same maps returned instead of stored, `run` untouched (a view reading a shared run): per
// head, T x T each.
template <typename Scalar>
struct LayerMaps {
    std::vector<Matrix<Scalar>> scores;
    std::vector<Matrix<Scalar>> weights;
    std::vector<Matrix<Scalar>> contentToPosition, positionToContent;  // DeBERTa's, else empty
    std::vector<Matrix<Scalar>> positionBias;                          // MPNet's, else empty
};
template <typename Scalar>
LayerMaps<Scalar> recomputedLayerMaps(const Model& model, const ModelRun<Scalar>& run, int layer);

// Decoders: the logits (V) at `position`: the run's row when it kept it, else the LM head on that
// row of run.finalHidden. Throws ModelError for bert or a position outside the run.
template <typename Scalar>
Eigen::VectorXd logitsAt(const Model& model, const ModelRun<Scalar>& run, int position);

extern template EncoderDecoderRun<float> runEncoderDecoder<float>(const Model&,
                                                                  const std::vector<long long>&,
                                                                  const std::vector<long long>&,
                                                                  const RunOptions&);
extern template EncoderDecoderRun<double> runEncoderDecoder<double>(const Model&,
                                                                    const std::vector<long long>&,
                                                                    const std::vector<long long>&,
                                                                    const RunOptions&);
extern template std::vector<long long> generateGreedy<float>(
    const Model&, const std::vector<long long>&, int, const RunOptions&,
    const std::function<bool(const std::vector<long long>&)>&);
extern template std::vector<long long> generateGreedy<double>(
    const Model&, const std::vector<long long>&, int, const RunOptions&,
    const std::function<bool(const std::vector<long long>&)>&);
extern template ModelRun<float> runModel<float>(const Model&, const std::vector<long long>&,
                                                const RunOptions&);
extern template ModelRun<double> runModel<double>(const Model&, const std::vector<long long>&,
                                                  const RunOptions&);
extern template ModelRun<float> rerunModel<float>(const Model&, const ModelRun<float>&,
                                                  const std::vector<long long>&, const RunOptions&);
extern template ModelRun<double> rerunModel<double>(const Model&, const ModelRun<double>&,
                                                    const std::vector<long long>&,
                                                    const RunOptions&);
extern template void recomputeLayerMaps<float>(const Model&, ModelRun<float>&, int);
extern template LayerMaps<float> recomputedLayerMaps<float>(const Model&, const ModelRun<float>&,
                                                            int);
extern template LayerMaps<double> recomputedLayerMaps<double>(const Model&, const ModelRun<double>&,
                                                              int);
extern template void recomputeLayerMaps<double>(const Model&, ModelRun<double>&, int);
extern template void resumeAfterAttention<float>(const Model&, ModelRun<float>&, int,
                                                 const Matrix<float>&, const Matrix<float>&,
                                                 const RunOptions&);
extern template void resumeAfterAttention<double>(const Model&, ModelRun<double>&, int,
                                                  const Matrix<double>&, const Matrix<double>&,
                                                  const RunOptions&);

}  // namespace ae::model
