// The workbench's analyses (core/model/workbench.h), after shared/reference/analysis_reference.py:
// the same decomposition in the same order, on the pass's own steps (core/model/model_steps.h).
#include "core/model/workbench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>

#include "core/model/forward_ops.h"
#include "core/model/model_steps.h"
#include "core/value_weighting.h"

namespace ae::model {
namespace {

using MatrixD = Matrix<double>;
using VectorD = Eigen::VectorXd;
using RowD = Eigen::RowVectorXd;

// A stored weight in the x·W orientation: GPT-2's Conv1D [in, out] as stored, nn.Linear's
// [out, in] transposed.
MatrixD asXW(const Architecture& a, const TensorRef& tensor) {
    const forward::WeightView<double> view(tensor);
    if (a.layout == WeightLayout::Conv1D) return view.matrix();
    return view.matrix().transpose();
}

// Layer l's attention weights per query head, x·W: W_Q^h, and W_K^h, W_V^h of the kv head it
// reads (d x hd each); W_O^h (hd x d); b_O (d, zeros where the family has none).
struct HeadMatrices {
    std::vector<MatrixD> query, key, value, output;
    VectorD outputBias;
};

HeadMatrices headMatrices(const Model& model, int layer) {
    const Config& c = model.config;
    const Architecture a = c.architecture();
    const LayerWeights& lw = model.weights.layers[static_cast<std::size_t>(layer)];
    const Eigen::Index hd = c.headDim, width = static_cast<Eigen::Index>(c.heads) * hd,
                       kvWidth = static_cast<Eigen::Index>(c.kvHeads) * hd;
    MatrixD q, k, v;  // d x H·hd, d x KV·hd, d x KV·hd
    if (a.qkv == QkvStorage::Separate) {
        q = asXW(a, lw.query);
        k = asXW(a, lw.key);
        v = asXW(a, lw.value);
    } else if (a.qkv == QkvStorage::Fused) {
        const MatrixD all = asXW(a, lw.qkv);  // [Q | K | V]
        q = all.leftCols(width);
        k = all.middleCols(width, kvWidth);
        v = all.rightCols(kvWidth);
    } else {
        const MatrixD all = asXW(a, lw.qkv);  // per head [q_h | k_h | v_h]
        q.resize(all.rows(), width);
        k.resize(all.rows(), width);
        v.resize(all.rows(), width);
        for (Eigen::Index h = 0; h < c.heads; ++h) {
            q.middleCols(h * hd, hd) = all.middleCols(3 * hd * h, hd);
            k.middleCols(h * hd, hd) = all.middleCols(3 * hd * h + hd, hd);
            v.middleCols(h * hd, hd) = all.middleCols(3 * hd * h + 2 * hd, hd);
        }
    }
    const MatrixD o = asXW(a, lw.output);  // H·hd x d
    HeadMatrices m;
    for (int h = 0; h < c.heads; ++h) {
        const Eigen::Index g = c.kvHeadOf(h);
        m.query.push_back(q.middleCols(h * hd, hd));
        m.key.push_back(k.middleCols(g * hd, hd));
        m.value.push_back(v.middleCols(g * hd, hd));
        m.output.push_back(o.middleRows(h * hd, hd));
    }
    m.outputBias = lw.outputBias.present()
                       ? VectorD(forward::WeightView<double>(lw.outputBias).vector())
                       : VectorD::Zero(c.hidden);
    return m;
}

const char* normKindName(NormType norm) {
    switch (norm) {
        case NormType::LayerNorm:
        case NormType::LayerNormNoBias:
            return "layernorm";
        case NormType::RmsNorm:
            return "rmsnorm";
        case NormType::RmsNormPlusOneWeight:
            return "gemma";
    }
    return "rmsnorm";
}

bool isLayerNorm(NormType norm) {
    return norm == NormType::LayerNorm || norm == NormType::LayerNormNoBias;
}

// A norm's weight as the multiplier it applies (Gemma's 1 + w).
VectorD normGain(NormType norm, const TensorRef& weight) {
    VectorD g = forward::WeightView<double>(weight).vector();
    if (norm == NormType::RmsNormPlusOneWeight) g.array() += 1.0;
    return g;
}

double rmsScale(const RowD& x, double eps) {
    return 1.0 / std::sqrt(x.squaredNorm() / static_cast<double>(x.size()) + eps);
}

// The norm between layer l's attention output and its residual add (Gemma 2's and 3's
// post_attention_layernorm, OLMo 2's), if any.
const TensorRef* postAttentionNorm(const Model& model, int layer) {
    const NormPlacement p = model.config.architecture().placement;
    if (p != NormPlacement::Sandwich && p != NormPlacement::PostOnly) return nullptr;
    return &model.weights.layers[static_cast<std::size_t>(layer)].attentionOutputNorm;
}

// resid_0 .. resid_L of a run (T x d each): the layers' inputs, and the last layer's output.
template <typename Scalar>
std::vector<Matrix<Scalar>> residualStream(const Model& model, const ModelRun<Scalar>& run) {
    const int L = model.config.layers;
    std::vector<Matrix<Scalar>> resid;
    for (int b = 0; b < L; ++b)
        resid.push_back(run.layers[static_cast<std::size_t>(b)].hiddenIn);
    resid.push_back(layerOutput(model, L - 1, resid.back(), run.options));
    return resid;
}

template <typename Scalar>
void requireMaps(const ModelRun<Scalar>& run, const char* what) {
    for (const LayerRecord<Scalar>& layer : run.layers)
        if (!layer.hasMaps())
            throw ModelError(std::string(what) + ": the run must keep every layer's maps");
}

void checkToken(const Config& c, long long token, const char* what) {
    if (token < 0 || token >= c.vocab)
        throw ModelError(std::string(what) + " " + std::to_string(token) +
                         " is not a token id in [0, " + std::to_string(c.vocab) + ")");
}

int resolvePosition(int position, long long T) {
    if (position < -T || position >= T)
        throw ModelError("position " + std::to_string(position) + " is outside the " +
                         std::to_string(T) + " tokens");
    return static_cast<int>((position + T) % T);
}

// z^l_h of a run that kept its maps: weights^l_h · v of the kv head it reads, T x hd.
template <typename Scalar>
MatrixD headContext(const ModelRun<Scalar>& run, int layer, int head) {
    return (run.layers[static_cast<std::size_t>(layer)]
                .weights[static_cast<std::size_t>(head)]
                .template cast<double>() *
            run.v(layer, head).template cast<double>())
        .eval();
}

}  // namespace

const char* analysisName(Analysis analysis) {
    switch (analysis) {
        case Analysis::Lens:
            return "lens";
        case Analysis::Attribution:
            return "dla";
        case Analysis::Patching:
            return "patch";
        case Analysis::ValueNorms:
            return "value_norms";
        case Analysis::Composition:
            return "composition";
    }
    return "?";
}

void requireAnalysis(const Config& c, Analysis analysis) {
    const Architecture a = c.architecture();
    const std::string family = familyName(c.family);
    const bool readsLogits = analysis == Analysis::Lens || analysis == Analysis::Attribution ||
                             analysis == Analysis::Patching;
    if (!readsLogits || a.decoder) return;
    if (analysis == Analysis::Attribution && a.placement == NormPlacement::Post) {
        throw ModelError("dla is not defined for " + family +
                         ": it is post-norm (a LayerNorm follows every residual add and rescales "
                         "all earlier components together), so no component reaches the output "
                         "through one frozen norm");
    }
    throw ModelError(std::string(analysisName(analysis)) + " is not defined for " + family +
                     ": it reads a causal LM head's logits, and " + family +
                     " is an encoder (its result ends in last_hidden; masked-LM heads are not "
                     "covered by the analyses yet)");
}

template <typename Scalar>
LensResult logitLens(const Model& model, const ModelRun<Scalar>& run,
                     const std::vector<long long>& targets, int top) {
    const Config& c = model.config;
    requireAnalysis(c, Analysis::Lens);
    for (long long t : targets)
        checkToken(c, t, "target");
    if (top < 1) throw ModelError("top " + std::to_string(top) + " must be a positive integer");
    LensResult out;
    out.topK = static_cast<int>(std::min<long long>(top, c.vocab));
    out.targets = targets;
    const std::vector<Matrix<Scalar>> resid = residualStream(model, run);
    std::vector<long long> order(static_cast<std::size_t>(c.vocab));
    for (const Matrix<Scalar>& boundary : resid) {
        const MatrixD logits = finalHeadLogits(model, boundary).template cast<double>();
        auto& ids = out.topIds.emplace_back();
        auto& probabilities = out.topProbabilities.emplace_back();
        auto& targetProbabilities = out.targetProbabilities.emplace_back();
        auto& ranks = out.targetRanks.emplace_back();
        auto& targetLogits = out.targetLogits.emplace_back();
        for (Eigen::Index t = 0; t < logits.rows(); ++t) {
            const RowD row = logits.row(t);
            const RowD e = (row.array() - row.maxCoeff()).exp().matrix();
            const double sum = e.sum();
            std::iota(order.begin(), order.end(), 0LL);
            std::partial_sort(order.begin(), order.begin() + out.topK, order.end(),
                              [&](long long a, long long b) {
                                  return row(a) > row(b) || (row(a) == row(b) && a < b);
                              });
            ids.emplace_back(order.begin(), order.begin() + out.topK);
            auto& p = probabilities.emplace_back();
            for (int k = 0; k < out.topK; ++k)
                p.push_back(e(order[static_cast<std::size_t>(k)]) / sum);
            auto& tp = targetProbabilities.emplace_back();
            auto& tr = ranks.emplace_back();
            auto& tl = targetLogits.emplace_back();
            for (long long a : targets) {
                tp.push_back(e(a) / sum);
                tr.push_back(1 + (row.array() > row(a)).count());
                tl.push_back(row(a));
            }
        }
    }
    return out;
}

template <typename Scalar>
AttributionResult directLogitAttribution(const Model& model, const ModelRun<Scalar>& run,
                                         int position, long long target, long long foil) {
    const Config& c = model.config;
    requireAnalysis(c, Analysis::Attribution);
    checkToken(c, target, "target");
    if (foil >= 0) {
        checkToken(c, foil, "foil");
        if (foil == target)
            throw ModelError("foil equals target: the logit difference is 0 by construction");
    }
    requireMaps(run, "dla");
    const long long T = static_cast<long long>(run.tokens.size());
    const int p = resolvePosition(position, T);
    const Architecture a = c.architecture();
    const int L = c.layers, H = c.heads;
    const std::vector<Matrix<Scalar>> stream = residualStream(model, run);
    std::vector<RowD> resid;  // row p of each boundary
    for (const Matrix<Scalar>& m : stream)
        resid.push_back(m.row(p).template cast<double>());
    const RowD logits = finalHeadLogits(model, stream.back()).row(p).template cast<double>();

    AttributionResult out;
    out.position = p;
    out.target = target;
    out.foil = foil;
    out.logitDifference = logits(target) - (foil >= 0 ? logits(foil) : 0.0);
    // The final norm frozen at x = resid_L[p]: N(v) = (v − mean v) / s(x) · g (LayerNorm), or
    // v · r(x) · g (RMS; Gemma's (1 + w)).
    const RowD& x = resid.back();
    const VectorD gain = normGain(a.norm, model.weights.finalNorm);
    const bool layerNorm = isLayerNorm(a.norm);
    double scale = 0;
    if (layerNorm) {
        const double mean = x.mean();
        scale = 1.0 / std::sqrt((x.array() - mean).square().mean() + c.normEps);
    } else {
        scale = rmsScale(x, c.normEps);
    }
    out.finalNormKind = normKindName(a.norm);
    out.finalNormScale = scale;
    const auto normed = [&](const RowD& v) -> RowD {
        const RowD centred = layerNorm ? RowD(v.array() - v.mean()) : v;
        return (centred.array() * scale * gain.transpose().array()).matrix();
    };
    // The unembedding direction u = s_A·W_U[A] − s_B·W_U[B], the final soft-cap frozen per logit
    // as s_v = logit_v / raw_v.
    const forward::WeightView<double> unembed(model.weights.lmHead);
    const auto W = unembed.matrix();
    std::vector<long long> read{target};
    if (foil >= 0) read.push_back(foil);
    std::vector<double> factors(read.size(), 1.0);
    if (c.finalSoftCap > 0) {
        RowD rawInput = normed(x);
        if (layerNorm && model.weights.finalNormBias.present())
            rawInput +=
                forward::WeightView<double>(model.weights.finalNormBias).vector().transpose();
        for (std::size_t i = 0; i < read.size(); ++i) {
            const double raw = rawInput.dot(W.row(read[i]));
            factors[i] = raw != 0.0 ? logits(read[i]) / raw : 1.0;
        }
        out.softCapFactors = factors;
    }
    RowD u = factors[0] * W.row(target);
    if (foil >= 0) u -= factors[1] * W.row(foil);
    const auto part = [&](const RowD& v) { return normed(v).dot(u); };

    out.embed = part(resid[0]);
    out.heads.assign(static_cast<std::size_t>(L), std::vector<double>(static_cast<std::size_t>(H)));
    for (int l = 0; l < L; ++l) {
        const HeadMatrices w = headMatrices(model, l);
        std::vector<RowD> outs;
        RowD attended = w.outputBias.transpose();
        for (int h = 0; h < H; ++h) {
            outs.push_back(headContext(run, l, h).row(p) * w.output[static_cast<std::size_t>(h)]);
            attended += outs.back();
        }
        RowD bias = w.outputBias.transpose(), added = attended;
        if (const TensorRef* post = postAttentionNorm(model, l)) {
            const double r = rmsScale(attended, c.normEps);
            const RowD g = normGain(a.norm, *post).transpose();
            for (RowD& o : outs)
                o = (o.array() * r * g.array()).matrix();
            bias = (bias.array() * r * g.array()).matrix();
            added = (attended.array() * r * g.array()).matrix();
            out.postAttentionScales.push_back(r);
        }
        for (int h = 0; h < H; ++h)
            out.heads[static_cast<std::size_t>(l)][static_cast<std::size_t>(h)] =
                part(outs[static_cast<std::size_t>(h)]);
        out.attentionBias.push_back(part(bias));
        out.mlp.push_back(part(resid[static_cast<std::size_t>(l + 1)] -
                               resid[static_cast<std::size_t>(l)] - added));
    }
    if (layerNorm && model.weights.finalNormBias.present())
        out.finalNormBias =
            forward::WeightView<double>(model.weights.finalNormBias).vector().dot(u.transpose());
    double total = out.embed + out.finalNormBias;
    for (const auto& layer : out.heads)
        total = std::accumulate(layer.begin(), layer.end(), total);
    total = std::accumulate(out.attentionBias.begin(), out.attentionBias.end(), total);
    total = std::accumulate(out.mlp.begin(), out.mlp.end(), total);
    out.sum = total;
    return out;
}

namespace {

// The corrupted run continued from layer `layer` with `input` entering it and, when given, its
// attention output replaced: the metric at `position`.
template <typename Scalar>
double metricFrom(const Model& model, int layer, Matrix<Scalar> h, const Matrix<Scalar>* attention,
                  const RunOptions& options, int position, long long target, long long foil) {
    const int L = model.config.layers;
    h = attention ? finishLayerOutput(model, layer, h, *attention, options)
                  : layerOutput(model, layer, h, options);
    for (int l = layer + 1; l < L; ++l)
        h = layerOutput(model, l, h, options);
    const Matrix<Scalar> row = h.row(position);
    const Matrix<Scalar> logits = finalHeadLogits(model, row);
    return static_cast<double>(logits(0, target)) -
           (foil >= 0 ? static_cast<double>(logits(0, foil)) : 0.0);
}

// B patched runs stacked (B·T x d, the residual entering layer `layer`), continued to the end:
// each run's metric at `position`.
template <typename Scalar>
std::vector<double> stackedMetrics(const Model& model, int layer, Matrix<Scalar> h, Eigen::Index T,
                                   const RunOptions& options, int position, long long target,
                                   long long foil) {
    for (int l = layer; l < model.config.layers; ++l)
        h = stackedLayerOutput(model, l, h, T, options);
    const Eigen::Index runs = h.rows() / T;
    Matrix<Scalar> rows(runs, h.cols());
    for (Eigen::Index b = 0; b < runs; ++b)
        rows.row(b) = h.row(b * T + position);
    const Matrix<Scalar> logits = finalHeadLogits(model, rows);
    std::vector<double> metrics;
    for (Eigen::Index b = 0; b < runs; ++b)
        metrics.push_back(static_cast<double>(logits(b, target)) -
                          (foil >= 0 ? static_cast<double>(logits(b, foil)) : 0.0));
    return metrics;
}

}  // namespace

template <typename Scalar>
double metricAfter(const Model& model, int layer, const Matrix<Scalar>& input, int position,
                   long long target, long long foil) {
    const Config& c = model.config;
    requireAnalysis(c, Analysis::Patching);
    checkToken(c, target, "target");
    if (foil >= 0) checkToken(c, foil, "foil");
    return metricFrom<Scalar>(model, layer, input, nullptr, RunOptions{},
                              resolvePosition(position, input.rows()), target, foil);
}

template <typename Scalar>
PatchingResult activationPatching(const Model& model, const std::vector<long long>& clean,
                                  const std::vector<long long>& corrupt, int position,
                                  long long target, long long foil,
                                  const std::function<bool(double)>& progress,
                                  PatchingSweeps sweeps,
                                  const std::vector<HeadAblation>& headsOff) {
    const Config& c = model.config;
    requireAnalysis(c, Analysis::Patching);
    for (const HeadAblation& off : headsOff)
        if (off.layer < 0 || off.layer >= c.layers || off.head < 0 || off.head >= c.heads)
            throw ModelError("head L" + std::to_string(off.layer) + "H" + std::to_string(off.head) +
                             " switched off is not in the model (" + std::to_string(c.layers) +
                             " layers of " + std::to_string(c.heads) + " heads)");
    if (clean.size() != corrupt.size())
        throw ModelError("clean ids (" + std::to_string(clean.size()) +
                         " tokens) and corrupted ids (" + std::to_string(corrupt.size()) +
                         " tokens) differ in length");
    checkToken(c, target, "target");
    if (foil >= 0) {
        checkToken(c, foil, "foil");
        if (foil == target) throw ModelError("foil equals target: the metric is 0 in every run");
    }
    const long long T = static_cast<long long>(clean.size());
    const int p = resolvePosition(position, T);
    RunOptions options;
    options.ablations = headsOff;  // by zeros, in both runs and every patched one
    const ModelRun<Scalar> cleanRun = runModel<Scalar>(model, clean, options);
    const ModelRun<Scalar> corruptRun = runModel<Scalar>(model, corrupt, options);
    const auto metric = [&](const ModelRun<Scalar>& run) {
        return static_cast<double>(run.logits(p, target)) -
               (foil >= 0 ? static_cast<double>(run.logits(p, foil)) : 0.0);
    };
    PatchingResult out;
    out.position = p;
    out.target = target;
    out.foil = foil;
    out.cleanMetric = metric(cleanRun);
    out.corruptMetric = metric(corruptRun);
    const double span = out.cleanMetric - out.corruptMetric;
    if (std::abs(span) <= 1e-9 * (1.0 + std::abs(out.cleanMetric))) {
        char value[32];
        std::snprintf(value, sizeof value, "%.17g", out.cleanMetric);
        throw ModelError(std::string("the clean and corrupted metrics are equal (") + value +
                         "): the normalised effect (patched - corrupted) / (clean - corrupted) "
                         "would divide by zero");
    }
    const int L = c.layers, H = c.heads;
    const Eigen::Index hd = c.headDim;
    const double total =
        static_cast<double>(L) * ((sweeps.heads ? H : 0) + (sweeps.pattern ? H : 0) +
                                  (sweeps.residual ? static_cast<double>(T) : 0.0));
    double done = 0;
    const auto effect = [&](double patched) {
        if (progress && !progress(++done / total)) throw RunCancelled();
        return (patched - out.corruptMetric) / span + 0.0;  // + 0.0: no −0
    };
    // Patched runs go through the later layers in batches, stacked: the layers' MLPs and the LM
    // head are read once for a batch instead of once a run (a short text's pass is bound by
    // reading the weights). A batch's activations stay under 256 MiB.
    const double perRun = static_cast<double>(T) *
                          (4.0 * c.hidden + 3.0 * c.intermediate +
                           3.0 * static_cast<double>(c.heads + c.kvHeads) * c.headDim) *
                          sizeof(Scalar);
    const std::size_t batch = static_cast<std::size_t>(
        std::clamp(256.0 * 1024 * 1024 / std::max(perRun, 1.0), 1.0, 64.0));
    out.heads.assign(static_cast<std::size_t>(L), {});
    out.pattern.assign(static_cast<std::size_t>(L), {});
    out.residual.assign(static_cast<std::size_t>(L), {});
    for (int l = 0; l < L; ++l) {
        const auto at = static_cast<std::size_t>(l);
        const Matrix<Scalar>& input = corruptRun.layers[at].hiddenIn;
        Matrix<Scalar> contexts;  // the corrupted run's, T x H·hd
        if (sweeps.heads || sweeps.pattern) attentionOutput(model, l, input, options, &contexts);
        // Head patches: items 0..H−1 take head h's output from the clean run, items H..2H−1 its
        // pattern alone (the values stay the corrupted run's). Each is layer l's attention output.
        std::vector<int> items;
        for (int h = 0; h < (sweeps.heads ? H : 0); ++h)
            items.push_back(h);
        for (int h = 0; h < (sweeps.pattern ? H : 0); ++h)
            items.push_back(H + h);
        const auto attentionOf = [&](int item) {
            const int h = item % H;
            // A head switched off outputs zeros in both runs: patching it changes nothing.
            if (std::find(headsOff.begin(), headsOff.end(), HeadAblation{l, h}) != headsOff.end())
                return outputProjection(model, l, contexts);
            const Matrix<Scalar>& weights =
                cleanRun.layers[at].weights[static_cast<std::size_t>(h)];
            Matrix<Scalar> patched = contexts;
            patched.middleCols(h * hd, hd) =
                weights * (item < H ? cleanRun.v(l, h) : corruptRun.v(l, h));
            return outputProjection(model, l, patched);
        };
        for (std::size_t first = 0; first < items.size(); first += batch) {
            const std::size_t n = std::min(batch, items.size() - first);
            Matrix<Scalar> inputs(static_cast<Eigen::Index>(n) * T, c.hidden);
            Matrix<Scalar> attention(inputs.rows(), c.hidden);
            for (std::size_t j = 0; j < n; ++j) {
                inputs.middleRows(static_cast<Eigen::Index>(j) * T, T) = input;
                attention.middleRows(static_cast<Eigen::Index>(j) * T, T) =
                    attentionOf(items[first + j]);
            }
            const std::vector<double> metrics = stackedMetrics(
                model, l + 1, finishLayerOutput(model, l, inputs, attention, options), T, options,
                p, target, foil);
            for (std::size_t j = 0; j < n; ++j) {
                const int item = items[first + j];
                (item < H ? out.heads : out.pattern)[at].push_back(effect(metrics[j]));
            }
        }
        // Residual rows: row t of the input to layer l from the clean run.
        for (long long first = 0; first < (sweeps.residual ? T : 0);
             first += static_cast<long long>(batch)) {
            const long long n = std::min<long long>(static_cast<long long>(batch), T - first);
            Matrix<Scalar> inputs(n * T, c.hidden);
            for (long long j = 0; j < n; ++j) {
                inputs.middleRows(j * T, T) = input;
                inputs.row(j * T + first + j) = cleanRun.layers[at].hiddenIn.row(first + j);
            }
            const std::vector<double> metrics =
                stackedMetrics(model, l + 1, stackedLayerOutput(model, l, inputs, T, options), T,
                               options, p, target, foil);
            for (double m : metrics)
                out.residual[at].push_back(effect(m));
        }
    }
    return out;
}

template <typename Scalar>
Eigen::MatrixXd valueOutputNorms(const Model& model, const ModelRun<Scalar>& run, int layer) {
    const Config& c = model.config;
    if (layer < 0 || layer >= c.layers || layer >= static_cast<int>(run.layers.size()))
        throw ModelError("layer " + std::to_string(layer) + " is not in the run");
    const Architecture a = c.architecture();
    const MatrixD o = asXW(a, model.weights.layers[static_cast<std::size_t>(layer)].output);
    const Eigen::Index hd = c.headDim;
    Eigen::MatrixXd norms(c.heads, static_cast<Eigen::Index>(run.tokens.size()));
    for (int h = 0; h < c.heads; ++h)
        norms.row(h) =
            ae::valueOutputNorms(run.v(layer, h).template cast<double>(), o.middleRows(h * hd, hd));
    return norms;
}

template <typename Scalar>
void addValueNormScores(std::vector<HeadSummary>& summaries, const Model& model,
                        const ModelRun<Scalar>& run) {
    for (int l = 0; l < static_cast<int>(run.layers.size()); ++l) {
        const auto inLayer = [l](const HeadSummary& s) { return s.layer == l; };
        if (std::none_of(summaries.begin(), summaries.end(), inLayer)) continue;
        const LayerRecord<Scalar>& record = run.layers[static_cast<std::size_t>(l)];
        const std::vector<Matrix<Scalar>> weights =
            record.hasMaps() ? record.weights : recomputedLayerMaps(model, run, l).weights;
        const Eigen::MatrixXd norms = valueOutputNorms(model, run, l);
        for (HeadSummary& s : summaries) {
            if (!inLayer(s)) continue;
            // The norms are column-major: head s.head's row copied flat, as the scores read it.
            std::vector<double> f(static_cast<std::size_t>(norms.cols()));
            for (Eigen::Index j = 0; j < norms.cols(); ++j)
                f[static_cast<std::size_t>(j)] = norms(s.head, j);
            HeadWeights head(weights.at(static_cast<std::size_t>(s.head)), run.attentionMask);
            head.setValueNorms(f.data());
            for (const HeadScore& score : headScores())
                if (score.needsValueNorms) s.*score.value = score.measure(head);
        }
    }
}

template <typename Scalar>
std::vector<HeadSummary> summarizeCrossHeads(const Model& decoder,
                                             const ModelRun<Scalar>& decoderRun,
                                             const std::vector<int>& sourceSeparators) {
    const Config& c = decoder.config;
    if (!c.hasCrossAttention() || decoderRun.layers.empty() ||
        decoderRun.layers.front().cross.empty())
        throw ModelError(
            "cross-attention heads: the run has none (not an encoder-decoder "
            "model's decoder)");
    const Eigen::Index hd = c.headDim;
    // Every decoder row is a token: the encoder's padding hides keys, which weigh 0.
    const std::vector<int> everyRow;
    std::vector<HeadSummary> summaries;
    for (int l = 0; l < static_cast<int>(decoderRun.layers.size()); ++l) {
        const CrossRecord<Scalar>& cross = decoderRun.layers[static_cast<std::size_t>(l)].cross;
        const MatrixD o =
            asXW(c.architecture(), decoder.weights.layers[static_cast<std::size_t>(l)].crossOutput);
        for (int h = 0; h < c.heads; ++h) {
            const HeadWeights weights(cross.weights[static_cast<std::size_t>(h)], everyRow, {},
                                      &sourceSeparators);
            const Eigen::RowVectorXd norms =
                ae::valueOutputNorms(cross.value.middleCols(h * hd, hd).template cast<double>(),
                                     o.middleRows(h * hd, hd));
            const std::vector<double> flat(norms.data(), norms.data() + norms.size());
            HeadWeights withValues = weights;
            withValues.setValueNorms(flat.data());
            HeadSummary s;
            s.layer = l;
            s.head = h;
            s.entropy = headScore("entropy").measure(weights);
            s.firstToken = headScore("first_token").measure(weights);
            s.toSeparator = headScore("to_separator").measure(weights);
            s.sinkNorm = headScore("sink_norm").measure(withValues);
            s.previousToken = s.self = s.induction = std::numeric_limits<double>::quiet_NaN();
            summaries.push_back(s);
        }
    }
    return summaries;
}

template <typename Scalar>
ValueNormsResult valueNorms(const Model& model, const ModelRun<Scalar>& run) {
    const Config& c = model.config;
    requireAnalysis(c, Analysis::ValueNorms);
    requireMaps(run, "value_norms");
    ValueNormsResult out;
    for (int l = 0; l < c.layers; ++l) {
        const Eigen::MatrixXd f = valueOutputNorms(model, run, l);
        auto& norms = out.norms.emplace_back();
        auto& sinkWeight = out.sinkWeight.emplace_back();
        auto& sinkNorm = out.sinkNorm.emplace_back();
        for (int h = 0; h < c.heads; ++h) {
            const MatrixD alpha = run.layers[static_cast<std::size_t>(l)]
                                      .weights[static_cast<std::size_t>(h)]
                                      .template cast<double>();
            sinkWeight.push_back(alpha.col(0).mean());
            sinkNorm.push_back(ae::valueWeightedMap(alpha, f.row(h)).col(0).mean());
            norms.push_back(alpha.array().rowwise() * f.row(h).array());
        }
    }
    return out;
}

CompositionResult compositionScores(const Model& model) {
    const Config& c = model.config;
    requireAnalysis(c, Analysis::Composition);
    const Architecture a = c.architecture();
    const int L = c.layers, H = c.heads, N = L * H;
    CompositionResult out;
    // TransformerLens's writers are centred in LayerNorm models whose heads' outputs every
    // reader sees through a LayerNorm (not the post-norm encoders).
    out.centeredWriting = isLayerNorm(a.norm) && a.placement != NormPlacement::Post;
    std::vector<MatrixD> wq, wk, wv, wo;  // per (l, h): d x hd, d x hd, d x hd, hd x d
    for (int l = 0; l < L; ++l) {
        HeadMatrices w = headMatrices(model, l);
        const bool reads =
            (a.placement == NormPlacement::Pre || a.placement == NormPlacement::Sandwich ||
             a.placement == NormPlacement::Parallel) &&
            (l > 0 || a.firstLayerAttentionNorm);
        out.readingFold.push_back(reads ? normKindName(a.norm) : "none");
        const VectorD g =
            reads ? normGain(a.norm, model.weights.layers[static_cast<std::size_t>(l)].norm1)
                  : VectorD();
        for (int h = 0; h < H; ++h) {
            const auto at = static_cast<std::size_t>(h);
            for (MatrixD* m : {&w.query[at], &w.key[at], &w.value[at]}) {
                if (!reads) continue;
                *m = g.asDiagonal() * *m;  // diag(g)·W
                if (isLayerNorm(a.norm))   // P·diag(g)·W: each column's mean over d removed
                    m->rowwise() -= m->colwise().mean();
            }
            if (out.centeredWriting) {  // W_O·P: each row's mean over d removed
                MatrixD& o = w.output[at];
                o.colwise() -= o.rowwise().mean();
            }
            wq.push_back(w.query[at]);
            wk.push_back(w.key[at]);
            wv.push_back(w.value[at]);
            wo.push_back(w.output[at]);
        }
    }
    // ‖A·B·E·F‖²_F = Σ (Kᵀ·G_A·K) ⊙ G_F with K = B·E, G_A = AᵀA, G_F = F·Fᵀ (hd x hd each).
    std::vector<MatrixD> gramA, gramB;
    std::vector<double> leftNorm;
    for (int i = 0; i < N; ++i) {
        gramA.push_back(wv[static_cast<std::size_t>(i)].transpose() *
                        wv[static_cast<std::size_t>(i)]);
        gramB.push_back(wo[static_cast<std::size_t>(i)] *
                        wo[static_cast<std::size_t>(i)].transpose());
        leftNorm.push_back(std::sqrt(std::max(0.0, gramA.back().cwiseProduct(gramB.back()).sum())));
    }
    const auto scores = [&](const std::vector<MatrixD>& E, const std::vector<MatrixD>& F,
                            bool transposeE, bool transposeF) {
        // Right factor j: E_j (d x hd) and F_j (hd x d), each given or as a transpose.
        const auto e = [&](int j) -> MatrixD {
            return transposeE ? MatrixD(E[static_cast<std::size_t>(j)].transpose())
                              : E[static_cast<std::size_t>(j)];
        };
        const auto f = [&](int j) -> MatrixD {
            return transposeF ? MatrixD(F[static_cast<std::size_t>(j)].transpose())
                              : F[static_cast<std::size_t>(j)];
        };
        std::vector<MatrixD> rightE, gramF;
        std::vector<double> rightNorm;
        for (int j = 0; j < N; ++j) {
            rightE.push_back(e(j));
            gramF.push_back(f(j) * f(j).transpose());
            rightNorm.push_back(std::sqrt(std::max(
                0.0,
                (rightE.back().transpose() * rightE.back()).cwiseProduct(gramF.back()).sum())));
        }
        MatrixD s = MatrixD::Zero(N, N);
        for (int i = 0; i < N; ++i) {
            for (int j = 0; j < N; ++j) {
                if (i / H >= j / H) continue;  // l1 < l2 only
                const MatrixD K =
                    wo[static_cast<std::size_t>(i)] * rightE[static_cast<std::size_t>(j)];
                const double product =
                    std::sqrt(std::max(0.0, (K.transpose() * gramA[static_cast<std::size_t>(i)] * K)
                                                .cwiseProduct(gramF[static_cast<std::size_t>(j)])
                                                .sum()));
                const double denominator =
                    leftNorm[static_cast<std::size_t>(i)] * rightNorm[static_cast<std::size_t>(j)];
                s(i, j) = denominator > 0 ? product / denominator : 0.0;
            }
        }
        return s;
    };
    // Q: OV1·QK2 with QK = W_Q·W_Kᵀ; K: OV1·QK2ᵀ = OV1·W_K·W_Qᵀ; V: OV1·OV2.
    out.q = scores(wq, wk, false, true);
    out.k = scores(wk, wq, false, true);
    out.v = scores(wv, wo, false, false);
    return out;
}

template <typename Scalar>
double nextTokenLoss(const ModelRun<Scalar>& run, int first) {
    const long long T = static_cast<long long>(run.tokens.size());
    if (run.logitsFrom != 0 || run.logits.rows() != T)
        throw ModelError("next-token loss: the run must keep every position's logits");
    if (first < 0 || first > T - 2)
        throw ModelError("next-token loss: position " + std::to_string(first) +
                         " has no next token among " + std::to_string(T));
    double total = 0;
    for (long long i = first; i + 1 < T; ++i) {
        const RowD row = run.logits.row(i).template cast<double>();
        const double top = row.maxCoeff();
        const double logSum = top + std::log((row.array() - top).exp().sum());
        total += logSum - row(run.tokens[static_cast<std::size_t>(i + 1)]);
    }
    return total / static_cast<double>(T - 1 - first);
}

double randomCompositionBaseline(int hidden, int headDim, int samples, unsigned seed) {
    if (hidden < 1 || headDim < 1 || samples < 1)
        throw ModelError(
            "composition baseline: hidden size, head size and samples must be "
            "positive");
    std::mt19937 engine(seed);
    std::normal_distribution<double> normal;
    const auto draw = [&](int rows, int cols) {
        MatrixD m(rows, cols);
        for (Eigen::Index i = 0; i < m.size(); ++i)
            m.data()[i] = normal(engine);
        return m;
    };
    double total = 0;
    for (int s = 0; s < samples; ++s) {
        const MatrixD v = draw(hidden, headDim), o = draw(headDim, hidden);
        const MatrixD q = draw(hidden, headDim), k = draw(hidden, headDim);
        // ‖V·O·Q·Kᵀ‖²_F = Σ (Mᵀ·VᵀV·M) ⊙ KᵀK with M = O·Q (hd x hd); likewise each factor's norm.
        const MatrixD gramV = v.transpose() * v, gramO = o * o.transpose();
        const MatrixD gramQ = q.transpose() * q, gramK = k.transpose() * k;
        const MatrixD m = o * q;
        const double product = std::sqrt((m.transpose() * gramV * m).cwiseProduct(gramK).sum());
        const double left = std::sqrt(gramV.cwiseProduct(gramO).sum());
        const double right = std::sqrt(gramQ.cwiseProduct(gramK).sum());
        total += product / (left * right);
    }
    return total / samples;
}

template double nextTokenLoss<float>(const ModelRun<float>&, int);
template double nextTokenLoss<double>(const ModelRun<double>&, int);
template LensResult logitLens<float>(const Model&, const ModelRun<float>&,
                                     const std::vector<long long>&, int);
template LensResult logitLens<double>(const Model&, const ModelRun<double>&,
                                      const std::vector<long long>&, int);
template AttributionResult directLogitAttribution<float>(const Model&, const ModelRun<float>&, int,
                                                         long long, long long);
template AttributionResult directLogitAttribution<double>(const Model&, const ModelRun<double>&,
                                                          int, long long, long long);
template PatchingResult activationPatching<float>(const Model&, const std::vector<long long>&,
                                                  const std::vector<long long>&, int, long long,
                                                  long long, const std::function<bool(double)>&,
                                                  PatchingSweeps, const std::vector<HeadAblation>&);
template PatchingResult activationPatching<double>(const Model&, const std::vector<long long>&,
                                                   const std::vector<long long>&, int, long long,
                                                   long long, const std::function<bool(double)>&,
                                                   PatchingSweeps,
                                                   const std::vector<HeadAblation>&);
template double metricAfter<float>(const Model&, int, const Matrix<float>&, int, long long,
                                   long long);
template double metricAfter<double>(const Model&, int, const Matrix<double>&, int, long long,
                                    long long);
template ValueNormsResult valueNorms<float>(const Model&, const ModelRun<float>&);
template Eigen::MatrixXd valueOutputNorms<float>(const Model&, const ModelRun<float>&, int);
template Eigen::MatrixXd valueOutputNorms<double>(const Model&, const ModelRun<double>&, int);
template void addValueNormScores<float>(std::vector<HeadSummary>&, const Model&,
                                        const ModelRun<float>&);
template void addValueNormScores<double>(std::vector<HeadSummary>&, const Model&,
                                         const ModelRun<double>&);
template std::vector<HeadSummary> summarizeCrossHeads<float>(const Model&, const ModelRun<float>&,
                                                             const std::vector<int>&);
template std::vector<HeadSummary> summarizeCrossHeads<double>(const Model&, const ModelRun<double>&,
                                                              const std::vector<int>&);
template ValueNormsResult valueNorms<double>(const Model&, const ModelRun<double>&);

}  // namespace ae::model
