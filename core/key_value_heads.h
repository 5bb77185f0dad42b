#pragma once
// Grouped-query attention as a setting (issue 17): the number of key/value heads of a layer, from
// kv_heads = heads (multi-head) through groups (grouped-query, GQA) to 1 (multi-query), and what
// it costs at inference: the KV cache.
//
// Fewer kv heads are made from a multi-head layer the way Ainslie et al. 2023 ("GQA: Training
// Generalized Multi-Query Transformer Models from Multi-Head Checkpoints") convert a checkpoint:
// the key and value projection columns (and biases) of the query heads in a group are mean-pooled
// into the group's one kv head. Every setting is derived from one multi-head source (the weights
// as they stood before the first change), never from another pooled setting, so going back to
// more kv heads gives back exactly what the user had.

#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/scene.h"

namespace ae {

// The multi-head key and value projections a grouping is made from: every query head its own
// dHead columns. Shapes: key, value dModel x dProj; keyBias, valueBias dProj (or empty, when the
// scene's are).
struct KeyValueSource {
    MatrixD key, value;
    VectorD keyBias, valueBias;
};

// Mean over each group of heads' column blocks. `columns`: rows x (heads·dHead), head h's block
// its dHead contiguous columns from h·dHead. Returns rows x (kvHeads·dHead): kv head g's block is
// the mean of the blocks of heads g·s … g·s + s − 1, s = heads / kvHeads (summed in head order,
// then divided by s, so kvHeads = heads returns `columns` bit for bit). Needs kvHeads to divide
// heads and heads to divide the column count (SceneError otherwise).
MatrixD meanPoolHeadColumns(const MatrixD& columns, int heads, int kvHeads);
// The same for a bias, heads·dHead -> kvHeads·dHead; an empty vector stays empty.
VectorD meanPoolHeadColumns(const VectorD& bias, int heads, int kvHeads);

// The scene's K and V as a multi-head source: its own columns when every head has its own K and
// V, else each kv head's columns repeated for every query head of its group (Hugging Face's
// repeat_kv), which computes the same layer. Needs separate projections (SceneError otherwise).
KeyValueSource keyValueSource(const Scene& scene);

// Whether `scene`'s K, V and their biases are exactly (bit for bit) `source` pooled to the scene's
// heads and kv heads: the source still describes the scene, no weight was edited since.
bool isGroupedFrom(const Scene& scene, const KeyValueSource& source);

// `scene` with `heads` query heads and `kvHeads` kv heads, K and V (and biases) `source` pooled
// (meanPoolHeadColumns); kvHeads = heads makes every head its own K and V again (no kv_heads, the
// source's own matrices). Throws SceneError, leaving `scene` as it was, unless the
// projections are separate, `source` is dModel x dProj of the scene, `heads` is a head count the
// scene can take (checkHeadCount as if ungrouped) and kvHeads divides heads.
void setKeyValueHeads(Scene& scene, const KeyValueSource& source, int heads, int kvHeads);

// The kv head counts a layer of `heads` heads can have: its divisors, from 1 up.
std::vector<int> keyValueHeadChoices(int heads);
// The divisor of `heads` nearest to `kvHeads` (the larger of two equally near: fewer weights are
// averaged away). For a new head count that the old kv count does not divide.
int nearestKeyValueHeads(int heads, int kvHeads);

// "multi-head", "grouped (4 groups)" or "multi-query": the name of a setting.
std::string keyValueRegimeName(int heads, int kvHeads);

// --- the KV cache ------------------------------------------------------------------------------
// A decoder keeps every past token's keys and values: per token and layer 2 (K and V) x kvHeads x
// headDim numbers.

double keyValueCacheNumbersPerTokenPerLayer(int kvHeads, int headDim);
// All layers, in bytes: 2 x layers x kvHeads x headDim x bytesPerNumber.
double keyValueCacheBytesPerToken(int layers, int kvHeads, int headDim, int bytesPerNumber);
// Bytes as the status line shows them: "256 B", "32 KiB", "1.5 MiB" (powers of 1024, at most one
// decimal, none when whole).
std::string byteSizeText(double bytes);
// One layer at its setting: "KV cache 2 × 2 kv heads × 16 = 64 numbers/token/layer (256 B at
// float32)".
std::string keyValueCacheLayerText(int kvHeads, int headDim, int bytesPerNumber,
                                   const std::string& numberName);
// A whole model at its real size, its stored dtype: "Llama-3.2-1B: 32 KiB/token".
std::string keyValueCacheModelText(const std::string& name, const model::Config& config,
                                   DType dtype);
// The dtype the model's attention weights are stored in (layer 0's key or fused qkv projection).
DType attentionWeightsDType(const model::Model& model);

}  // namespace ae
