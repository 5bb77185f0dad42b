#include "core/model/model.h"

#include <algorithm>
#include <cmath>

#include "core/model/forward_ops.h"
#include "core/scene.h"

namespace ae::model {

const char* familyName(Family family) {
    return familyRow(family).modelType;
}

Config stackConfig(const Config& config, Config::Stack stack) {
    if (!config.isEncoderDecoder()) return config;
    Config c = config;
    c.stack = stack;
    if (stack == Config::Stack::Decoder) {
        c.layers = config.decoderLayers;
        c.heads = config.decoderHeads;
        c.kvHeads = config.decoderHeads;
        c.headDim = config.decoderHeadDim;
        c.intermediate = config.decoderIntermediate;
    }
    return c;
}

double Config::attentionScale(int layer) const {
    // 1/√hd (bert: / sqrt(head size); llama, qwen3: head_dim ** -0.5), or Gemma 2 and 3's
    // query_pre_attn_scalar ** -0.5. GPT2Attention may leave it out (scale_attn_weights false) and
    // divide by (layer + 1) (scale_attn_by_inverse_layer_idx).
    const double root = queryScalar > 0 ? std::pow(queryScalar, -0.5)
                                        : 1.0 / std::sqrt(static_cast<double>(headDim));
    double scale = scaleAttentionWeights ? root : 1.0;
    if (attentionScaleFactor != 1.0)
        scale = 1.0 / std::sqrt(static_cast<double>(headDim) * attentionScaleFactor);
    if (scaleByInverseLayer) scale /= static_cast<double>(layer + 1);
    return scale;
}

std::optional<ops::RopeParameters> Config::layerRope(int layer, long long positionsEnd) const {
    if (!rotary()) return std::nullopt;
    const LayerRotary kind =
        layerRotary.empty() ? LayerRotary::Global : layerRotary[static_cast<std::size_t>(layer)];
    if (kind == LayerRotary::None) return std::nullopt;
    if (kind == LayerRotary::Local) return localRope;
    ops::RopeParameters parameters = rope;
    if (parameters.scaling == RopeScaling::LongRope) {
        // modeling_rope_utils' longrope update: the long factors once the text outgrows the
        // original context.
        const bool longText = static_cast<double>(positionsEnd) > rope.originalMaxPositions;
        parameters.longRopeFactors = longText ? longRopeFactors : shortRopeFactors;
    }
    return parameters;
}

std::vector<TensorSpec> tensorSpecs(const Config& config, ModelWeights& weights) {
    return familyRow(config.family).tensorNames(config, weights);
}

void checkImplemented(const Config& c) {
    const std::string missing = unimplementedAxes(c.architecture());
    if (!missing.empty())
        throw ModelError(std::string(familyName(c.family)) + ": not implemented: " + missing);
}

std::vector<long long> learnedPositions(const Config& c, const std::vector<long long>& ids,
                                        int offset, long long firstRow) {
    const auto T = static_cast<long long>(ids.size());
    std::vector<long long> rows;
    rows.reserve(static_cast<std::size_t>(std::max(0LL, T - firstRow)));
    if (c.architecture().positions != PositionKind::LearnedAfterPadding) {
        for (long long t = firstRow; t < T; ++t)
            rows.push_back(c.positionRowOffset + offset + t);
        return rows;
    }
    long long seen = 0;  // non-padding ids so far, the earlier rows' included
    for (long long t = 0; t < T; ++t) {
        const bool padding = ids[static_cast<std::size_t>(t)] == c.paddingIdx;
        if (!padding) ++seen;
        if (t >= firstRow) rows.push_back(padding ? c.paddingIdx : c.paddingIdx + seen);
    }
    return rows;
}

namespace {

void checkAttentionMask(const Config& c, long long T, const std::vector<int>& mask) {
    if (mask.empty()) return;
    if (static_cast<long long>(mask.size()) != T) {
        throw ModelError("attention mask: " + std::to_string(mask.size()) + " values for " +
                         std::to_string(T) + " tokens");
    }
    for (std::size_t j = 0; j < mask.size(); ++j) {
        if (mask[j] != 0 && mask[j] != 1) {
            throw ModelError("attention mask[" + std::to_string(j) +
                             "]: " + std::to_string(mask[j]) + " (values must be 0 or 1)");
        }
    }
    // Query i sees key j when j is not padding (and j <= i in a decoder). So bert has an empty
    // row only when every token is padding, a decoder whenever the first token is (row 0 then
    // sees nothing): in both cases position 0 is the first empty row.
    const bool firstIsPadding = mask.front() == 0;
    const bool allPadding = std::find(mask.begin(), mask.end(), 1) == mask.end();
    if (allPadding || (c.isDecoder() && firstIsPadding)) {
        std::string message =
            "attention mask: query position 0 sees no key (its softmax row would be empty)";
        if (!allPadding) {
            message +=
                ": in a decoder a token sees only itself and earlier ones, so left "
                "padding leaves the first positions nothing to attend to; pad on the right";
        }
        throw ModelError(message);
    }
    // A sliding window hides the keys before i − W + 1: with padding, a query may have none
    // left (decoder_families.attend). attended[i]: the unpadded keys among the first i.
    std::vector<long long> attended(mask.size() + 1, 0);
    for (std::size_t j = 0; j < mask.size(); ++j)
        attended[j + 1] = attended[j] + mask[j];
    std::vector<int> checked;
    for (int layer = 0; layer < c.layers; ++layer) {
        const int window = c.slidingWindow(layer);
        if (window <= 0 || std::find(checked.begin(), checked.end(), window) != checked.end())
            continue;
        checked.push_back(window);
        for (long long i = 0; i < T; ++i) {
            // A decoder's window reaches back W − 1 keys, an encoder's W − 1 either way.
            const long long first = std::max(0LL, i - window + 1);
            const long long last = c.isDecoder() ? i : std::min(T - 1, i + window - 1);
            if (attended[static_cast<std::size_t>(last + 1)] ==
                attended[static_cast<std::size_t>(first)]) {
                throw ModelError(
                    "attention mask: query position " + std::to_string(i) +
                    " sees no key inside its sliding window (layer " + std::to_string(layer) +
                    (c.isDecoder() ? ", W = " + std::to_string(window)
                                   : ", |query − key| <= " + std::to_string(window - 1)) +
                    ")");
            }
        }
    }
}

// BertEmbeddings' token_type_ids: one a token, each a row of the token-type table
// (model_reference.check_token_types).
void checkTokenTypes(const Config& c, long long T, const std::vector<int>& types) {
    if (types.empty()) return;
    const std::string family = familyName(c.family);
    if (!c.architecture().tokenTypes) {
        throw ModelError("token types: " + family +
                         " has no token-type embeddings (its model takes no token_type_ids)");
    }
    if (static_cast<long long>(types.size()) != T)
        throw ModelError("token types: expected " + std::to_string(T) +
                         " values, one per token id");
    if (c.tokenTypes == 0) {
        throw ModelError("token types: type_vocab_size is 0, so this " + family +
                         " model has no token-type embeddings (transformers ignores "
                         "token_type_ids then)");
    }
    for (std::size_t j = 0; j < types.size(); ++j) {
        if (types[j] < 0 || types[j] >= c.tokenTypes) {
            throw ModelError("token types[" + std::to_string(j) + "]: " + std::to_string(types[j]) +
                             " is not an integer in [0, type_vocab_size " +
                             std::to_string(c.tokenTypes) + ")");
        }
    }
}

}  // namespace

void checkInputs(const Config& c, const std::vector<long long>& ids, const RunOptions& options) {
    if (ids.empty()) throw ModelError("token ids: expected at least one");
    for (std::size_t j = 0; j < ids.size(); ++j) {
        if (ids[j] < 0 || ids[j] >= c.vocab) {
            throw ModelError("token ids[" + std::to_string(j) + "]: " + std::to_string(ids[j]) +
                             " is not in [0, " + std::to_string(c.vocab) + ") (vocab_size)");
        }
    }
    const long long T = static_cast<long long>(ids.size());
    if (c.architecture().positions == PositionKind::LearnedAfterPadding) {
        // As RobertaEmbeddings numbers them: the last non-padding token's row must exist.
        const std::vector<long long> rows = learnedPositions(c, ids, 0);
        const long long last = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end());
        if (last >= c.positions) {
            throw ModelError(
                "token ids: " + std::to_string(last - c.paddingIdx) +
                " non-padding tokens need position id " + std::to_string(last) + ", but " +
                familyRow(c.family).positionsField + " is " + std::to_string(c.positions) +
                " and positions start after padding_idx " + std::to_string(c.paddingIdx) +
                ": at most " + std::to_string(c.positions - c.paddingIdx - 1) +
                " non-padding tokens fit");
        }
    } else if (c.positions > 0 && options.positionOffset + c.positionRowOffset + T > c.positions) {
        throw ModelError("token ids: " + std::to_string(T) + " tokens exceed the model's " +
                         std::to_string(c.positions - c.positionRowOffset) +
                         " learned positions (" + familyRow(c.family).positionsField + ")");
    }
    for (std::size_t a = 0; a < options.ablations.size(); ++a) {
        const HeadAblation& ablation = options.ablations[a];
        const std::string head =
            std::to_string(ablation.layer) + "." + std::to_string(ablation.head);
        if (ablation.layer < 0 || ablation.layer >= c.layers || ablation.head < 0 ||
            ablation.head >= c.heads) {
            throw ModelError(
                "ablation " + head + ": layer must be in 0 to " + std::to_string(c.layers - 1) +
                " and head in 0 to " + std::to_string(c.heads - 1) + " (the model has " +
                std::to_string(c.layers) + " layers of " + std::to_string(c.heads) + " heads)");
        }
        if (std::find(options.ablations.begin(), options.ablations.begin() + a, ablation) !=
            options.ablations.begin() + a) {
            throw ModelError("ablation " + head + ": listed twice");
        }
    }
    checkAttentionMask(c, T, options.attentionMask);
    checkTokenTypes(c, T, options.tokenTypes);
    for (int s : options.separators)
        if (s < 0 || s >= T)
            throw ModelError("separators: position " + std::to_string(s) + " is outside the " +
                             std::to_string(T) + " tokens");
}

RunMemory runMemory(const Model& model, long long tokens, int scalarSize, int layersWithMaps,
                    bool withDigests) {
    const Config& c = model.config;
    const double T = static_cast<double>(tokens), d = c.hidden, H = c.heads, KV = c.kvHeads,
                 hd = c.headDim, V = c.vocab, I = c.intermediate, s = scalarSize;
    RunMemory m;
    m.storedWeights = model.storedBytes;
    // The largest set of weights converted at one time: a layer's, or the LM head's blocks of rows
    // (one per thread, core/model/forward_ops.h).
    const DType compute = scalarSize == 8 ? DType::F64 : DType::F32;
    auto converted = [&](const TensorRef& t) {
        return t.present() && t.dtype != compute ? static_cast<double>(t.count()) * s : 0.0;
    };
    auto convertedInBlocks = [&](const TensorRef& t) {
        return t.present() && t.dtype != compute
                   ? static_cast<double>(std::min<long long>(
                         t.rows, forward::threadCount() * forward::kWeightRowBlock)) *
                         static_cast<double>(t.cols) * s
                   : 0.0;
    };
    const ModelWeights& w = model.weights;
    // The masked-LM head's decoder is read in blocks of rows like the LM head; its transform
    // whole.
    double largest = std::max(convertedInBlocks(w.lmHead),
                              convertedInBlocks(w.maskedLmDecoder) + converted(w.maskedLmDense) +
                                  converted(w.maskedLmDenseBias) + converted(w.maskedLmNorm) +
                                  converted(w.maskedLmNormBias) + converted(w.maskedLmDecoderBias));
    for (const LayerWeights& l : model.weights.layers) {
        double layer = 0;
        for (const TensorRef* t : {&l.norm1,
                                   &l.norm1Bias,
                                   &l.norm2,
                                   &l.norm2Bias,
                                   &l.qkv,
                                   &l.qkvBias,
                                   &l.query,
                                   &l.queryBias,
                                   &l.key,
                                   &l.keyBias,
                                   &l.value,
                                   &l.valueBias,
                                   &l.output,
                                   &l.outputBias,
                                   &l.queryNorm,
                                   &l.keyNorm,
                                   &l.gate,
                                   &l.gateBias,
                                   &l.up,
                                   &l.upBias,
                                   &l.down,
                                   &l.downBias,
                                   &l.gateUp,
                                   &l.gateUpBias,
                                   &l.attentionOutputNorm,
                                   &l.mlpOutputNorm,
                                   &l.crossQuery,
                                   &l.crossQueryBias,
                                   &l.crossKey,
                                   &l.crossKeyBias,
                                   &l.crossValue,
                                   &l.crossValueBias,
                                   &l.crossOutput,
                                   &l.crossOutputBias,
                                   &l.crossNorm,
                                   &l.crossNormBias})
            layer += converted(*t);
        largest = std::max(largest, layer);
    }
    m.convertedLayer = largest;
    const double mapLayers = layersWithMaps < 0 ? c.layers : std::min(layersWithMaps, c.layers);
    const double perLayer = T * d + T * H * hd + 2 * T * KV * hd;
    // MPNet's position bias: kept once, written with every layer that has maps.
    const double biasNumbers =
        c.architecture().scoreTerms == ScoreTermKind::BucketBias ? H * T * T : 0;
    // DeBERTa's c2p and p2c, per head and layer with maps.
    const double termMaps = (c.disentangled.contentToPosition ? 1.0 : 0.0) +
                            (c.disentangled.positionToContent ? 1.0 : 0.0);
    m.keptNumbers = c.layers * perLayer + mapLayers * ((2 + termMaps) * H * T * T + biasNumbers) +
                    (c.isDecoder() ? T * V : T * d) + (model.weights.hasMaskedLmHead() ? T * V : 0);
    m.kept = (m.keptNumbers - mapLayers * biasNumbers + biasNumbers) * s;
    if (withDigests) {
        // Per layer: the weights' sum over heads (T x T doubles) and every head's pooled map.
        const double cells = std::min<double>(T, kDigestCells);
        m.kept += c.layers * (8 * T * T + H * cells * cells * 4);
    }
    // One layer's work: hidden and normed copies, fused q k v, the context, the MLP's two
    // intermediates, a scaled row per thread, and the mask (bools and two Scalar arrays).
    m.working =
        (3 * T * d + T * (H + 2 * KV) * hd + T * H * hd + 2 * T * I) * s + 2 * T * T * s + T * T;
    // A layer whose maps are dropped computes them all the same, each head's weights freed as
    // soon as the head is done and summed into the digest in head order: one head per thread
    // at work, and, since heads take about the same time, about one per thread done and waiting
    // for an earlier one (not a bound: a slow head keeps the later ones waiting).
    if (mapLayers < c.layers)
        m.working += std::min<double>(H, 2.0 * forward::threadCount()) * T * T * s;
    return m;
}

void checkRunFitsInMemory(const Model& model, double bytes, const std::string& what,
                          double available) {
    if (available < 0) available = physicalMemoryBytes();
    if (available > 0 && !(bytes <= available)) {
        throw ModelError(model.folder + ": too large: needs about " + gibibytesText(bytes) + " (" +
                         what + "), this machine has " + gibibytesText(available));
    }
}

}  // namespace ae::model
