#pragma once
// The family table: every model family the engine runs, each one row. A row describes an
// architecture by its axes (which norm, where it sits, how q, k and v are stored, the positions,
// the MLP, the q/k norm), never by a name the forward pass could test for: the forward pass, the
// layer scene, the trainer and the writer branch on these axes, so a family whose axes are all
// implemented needs no code beyond its row, its config reader (io/model/model_folder.cpp) and its
// golden models (tests/data/models). A combination of axes no code implements is refused by name
// (unimplementedAxes).
//
// Outside core/model/ and io/model/ nothing names a family: callers hold a Config and ask it for
// its architecture, or look a row up by its model_type.

#include <string>
#include <string_view>
#include <vector>

namespace ae::model {

enum class Family {
    Gpt2,
    Bert,
    Llama,
    Qwen3,
    Qwen2,
    Mistral,
    Gemma,
    Gemma2,
    Gemma3Text,
    Gemma3,  // the text tower of the multimodal wrapper
    Phi3,
    GptNeox,
    Olmo2,
    SmolLm3,
    Roberta,
    XlmRoberta,
    DistilBert,
    Mpnet,
    ModernBert,
    DebertaV2,
    T5,
    Bart,
    Marian
};

enum class NormType {
    LayerNorm,            // (x − mean) / √(var + eps) · w + b
    LayerNormNoBias,      // the same without b
    RmsNorm,              // x / √(mean(x²) + eps) · w
    RmsNormPlusOneWeight  // the same · (1 + w)
};
enum class NormPlacement {
    Pre,       // x + f(norm(x)), a final norm after the last layer
    Post,      // norm(x + f(x)): a norm after each block's residual add, none at the end
    Sandwich,  // x + norm(f(norm(x))): norms before and after each block
    PostOnly,  // x + norm(f(x))
    Parallel   // x + attention(norm(x)) + mlp(norm(x))
};
enum class QkvStorage {
    Separate,         // q, k and v each their own tensor
    Fused,            // one tensor [Q | K | V] (in the family's weight layout)
    FusedInterleaved  // one tensor, per head [q_h | k_h | v_h]
};
enum class WeightLayout {
    Linear,  // nn.Linear's [out, in], y = x·Wᵀ + b
    Conv1D   // GPT-2's Conv1D [in, out], y = x·W + b
};
enum class PositionKind {
    Learned,  // a table of positions added to the token embeddings
    // The same table, its rows numbered from the token ids: padding_idx + 1 onwards over the
    // non-padding tokens, padding_idx itself at a padding token, whatever the attention mask
    // says (RoBERTa, XLM-R, MPNet).
    LearnedAfterPadding,
    Sinusoid,      // fixed sines and cosines added to the embeddings
    Rotary,        // q and k turned by position (full or partial, with scaling)
    RelativeBias,  // a bias on the scores by distance (T5)
    None
};
enum class MlpKind {
    Plain,  // down(act(up(x)))
    Gated   // down(act(gate(x)) ⊙ up(x))
};
enum class MlpStorage {
    Separate,  // gate and up each their own tensor
    Fused      // one tensor [gate | up] (Phi-3's gate_up_proj)
};
// Terms on each head's scores from relative positions, beside the PositionKind.
enum class ScoreTermKind {
    None,
    // One bias per head and relative-position bucket (T5's buckets, bidirectional), from one
    // table shared by every layer, added to the scaled scores (MPNet).
    BucketBias,
    // DeBERTa's disentangled attention: content-to-position and position-to-content scores,
    // from each layer's projections of one shared table of relative-position embeddings, added
    // to q·kᵀ before the scale.
    Disentangled
};
// How many stacks of layers a model has. EncoderDecoder (T5, BART, Marian): an encoder over the
// source ids, then a causal decoder over the decoder ids whose layers each add a cross-attention
// sub-block reading the encoder's output; each stack is described by its own Config
// (Config::stack), the decoder's ending in the language-model head.
enum class Stacks { One, EncoderDecoder };

enum class QkNormKind {
    None,
    PerHead,   // each head's q and k RMS-normed over hd (Qwen3)
    FullWidth  // q and k normed over the whole width before the heads split (OLMo 2)
};

struct Architecture {
    // Causal, with a language-model head; else an encoder. Of an encoder–decoder model: the
    // stack's (Config::architecture sets it).
    bool decoder = true;
    Stacks stacks = Stacks::One;
    NormType norm = NormType::LayerNorm;
    NormPlacement placement = NormPlacement::Pre;
    QkvStorage qkv = QkvStorage::Separate;
    WeightLayout layout = WeightLayout::Linear;
    PositionKind positions = PositionKind::Learned;
    MlpKind mlp = MlpKind::Plain;
    MlpStorage mlpStorage = MlpStorage::Separate;
    QkNormKind qkNorm = QkNormKind::None;  // in the architecture's norm type
    ScoreTermKind scoreTerms = ScoreTermKind::None;
    bool tokenTypes = false;     // a token-type table added to the embeddings (BERT)
    bool embeddingNorm = false;  // a norm on the embeddings before the first layer (BERT)
    // Pre-norm: layer 0's attention reads the embeddings' (already normed) output itself, with no
    // norm of its own (ModernBERT's nn.Identity attn_norm).
    bool firstLayerAttentionNorm = true;
    // DeBERTa's padding: the embeddings' output times the attention mask (padding rows 0), and a
    // padding query's logits all filled alike, so its softmax is uniform over every key.
    bool maskedPadding = false;
};

struct Config;
struct ModelWeights;
struct TensorSpec;
struct MaskedLmHeadNames;

// One family. Its tensor names: every tensor a config needs, with its shape and the slot of
// `weights` it fills (see TensorSpec in core/model/model.h).
struct FamilyRow {
    Family family;
    const char* modelType;  // as config.json's model_type spells it
    Architecture architecture;
    std::vector<std::string> prefixes;  // the prefixes its names may carry, tried in order
    const char* prefixProbe;            // the tensor whose presence decides the prefix
    const char* positionsField;         // the config field that limits the positions, for messages
    long long bosDefault;               // bos_token_id when config.json has none; −1: none
    // 0: `train --model` cannot make one; else its place in the trainer's list (1: the default).
    // The trainer implements the axes of these rows.
    int trainingChoice;
    std::vector<TensorSpec> (*tensorNames)(const Config& config, ModelWeights& weights);
    // Encoders: the names of the *ForMaskedLM head for `config` (read when a folder holds it);
    // null: the family has none.
    MaskedLmHeadNames (*maskedLmHead)(const Config& config) = nullptr;
};

// Every row, in the order messages list them.
const std::vector<FamilyRow>& familyTable();
const FamilyRow& familyRow(Family family);
// The row whose model_type is `modelType`, or nullptr.
const FamilyRow* familyRowNamed(std::string_view modelType);
// "gpt2, bert, llama, qwen3".
std::string supportedFamilies();
// The encoder–decoder rows' model types: "t5, bart and marian".
std::string encoderDecoderFamilyNames();
// The rows `train --model` can make, the default first; and as "llama or gpt2".
std::vector<const FamilyRow*> trainableFamilies();
std::string trainableFamilyNames();

// What the forward pass does not implement in `architecture`, as "norm placement: sandwich", or
// an empty string.
std::string unimplementedAxes(const Architecture& architecture);

}  // namespace ae::model
