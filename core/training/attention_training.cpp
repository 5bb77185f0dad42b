#include "core/training/attention_training.h"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/attention_engine.h"
#include "core/attention_kernel.h"
#include "core/init_draw.h"
#include "core/ops.h"
#include "core/scene_error.h"
#include "core/training/adam.h"
#include "core/training/backprop.h"

namespace ae {

const char* parameterGroupName(ParameterGroup group) {
    switch (group) {
        case ParameterGroup::Query:
            return "W_Q";
        case ParameterGroup::Key:
            return "W_K";
        case ParameterGroup::Value:
            return "W_V";
        case ParameterGroup::Output:
            return "W_O";
        case ParameterGroup::QueryBias:
            return "b_Q";
        case ParameterGroup::KeyBias:
            return "b_K";
        case ParameterGroup::ValueBias:
            return "b_V";
        case ParameterGroup::OutputBias:
            return "b_O";
        case ParameterGroup::Embeddings:
            return "embeddings";
        case ParameterGroup::Positions:
            return "positions";
        case ParameterGroup::NormWeight:
            return "norm.weight";
        case ParameterGroup::NormBias:
            return "norm.bias";
    }
    return "?";
}

std::vector<ParameterSpan> parameterSpans(LayerParameters& p) {
    std::vector<ParameterSpan> spans;
    auto add = [&spans](ParameterGroup group, auto& m) {
        if (m.size() > 0) spans.push_back({group, m.data(), m.size()});
    };
    add(ParameterGroup::Query, p.query);
    add(ParameterGroup::Key, p.key);
    add(ParameterGroup::Value, p.value);
    add(ParameterGroup::Output, p.output);
    add(ParameterGroup::QueryBias, p.queryBias);
    add(ParameterGroup::KeyBias, p.keyBias);
    add(ParameterGroup::ValueBias, p.valueBias);
    add(ParameterGroup::OutputBias, p.outputBias);
    add(ParameterGroup::Embeddings, p.embeddings);
    add(ParameterGroup::Positions, p.positions);
    add(ParameterGroup::NormWeight, p.normWeight);
    add(ParameterGroup::NormBias, p.normBias);
    return spans;
}

namespace {
// The gradients here are those of a version 1 layer. Training a layer with a version 2 feature
// would silently train another layer, so each is refused by the field that names it.
void refuseVersion2Features(const Scene& scene) {
    if (scene.norm.enabled && scene.norm.kind == NormKind::Rms)
        throw SceneError("norm.kind", "training supports layernorm only, not rmsnorm");
    if (scene.kvHeads)
        throw SceneError("kv_heads",
                         "training supports one K and V per head, not grouped kv heads");
    if (scene.qkNorm.enabled) throw SceneError("qk_norm", "training does not support a q/k norm");
    if (scene.rotary) throw SceneError("rotary", "training does not support rotary positions");
    if (!scene.ablation.heads.empty())
        throw SceneError("ablation", "training does not support switched-off heads");
}

// `v`, or zeros of length n when the scene left it out.
VectorD orZeros(const VectorD& v, Eigen::Index n) {
    return v.size() == n ? v : VectorD::Zero(n);
}
}  // namespace

LayerParameters parametersOf(const Scene& scene) {
    LayerParameters p;
    const Projections& proj = scene.projections;
    const int dProj = scene.dProj();
    if (proj.mode != ProjectionMode::Identity) {
        p.query = proj.query;
        p.value = proj.value;
        p.queryBias = orZeros(proj.queryBias, dProj);
        p.valueBias = orZeros(proj.valueBias, dProj);
        if (proj.mode == ProjectionMode::Separate) {
            p.key = proj.key;
            p.keyBias = orZeros(proj.keyBias, dProj);
        }
    }
    if (proj.hasOutput) {
        p.output = proj.output;
        p.outputBias = orZeros(proj.outputBias, proj.output.cols());
    }
    p.embeddings = scene.embeddings;
    if (scene.positional.kind == PositionalKind::Learned) p.positions = scene.positional.table;
    if (scene.norm.enabled) {
        p.normWeight = scene.norm.weight;
        p.normBias = scene.norm.bias;
    }
    return p;
}

void applyParameters(const LayerParameters& p, Scene& scene) {
    Projections& proj = scene.projections;
    if (proj.mode != ProjectionMode::Identity) {
        proj.query = p.query;
        proj.value = p.value;
        proj.queryBias = p.queryBias;
        proj.valueBias = p.valueBias;
        // The file format has no key bias in shared_qk mode; the reader copies the query's.
        proj.keyBias = proj.mode == ProjectionMode::Separate ? p.keyBias : p.queryBias;
        if (proj.mode == ProjectionMode::Separate) proj.key = p.key;
    }
    if (proj.hasOutput) {
        proj.output = p.output;
        proj.outputBias = p.outputBias;
    }
    scene.embeddings = p.embeddings;
    if (scene.positional.kind == PositionalKind::Learned) scene.positional.table = p.positions;
    if (scene.norm.enabled) {
        scene.norm.weight = p.normWeight;
        scene.norm.bias = p.normBias;
    }
    scene.init.reset();  // the numbers are no longer the drawn ones
}

ForwardPass forwardPass(const Scene& config, const LayerParameters& p) {
    if (config.hasSource) {
        throw SceneError("source", "training supports self-attention only, not a source sequence");
    }
    refuseVersion2Features(config);
    ForwardPass f;
    const int L = static_cast<int>(p.embeddings.rows());
    const attention::SoftmaxMask<double> mask(config.mask, config.maskFill, L, L);
    f.allowed = mask.visible();

    // 1. X0 = embeddings + positions, X = norm(X0).  L x dModel
    f.x0 = p.embeddings;
    ops::addPositions(f.x0, config.positional.kind, config.positional.base, p.positions, 0);
    f.x = f.x0;
    if (config.norm.enabled) {
        ops::layerNormRows(f.x, p.normWeight, p.normBias, config.norm.eps, &f.xHat,
                           &f.inverseDeviation);
    }

    // 2. Q, K, V.  L x dProj
    switch (config.projections.mode) {
        case ProjectionMode::Identity:
            f.q = f.k = f.v = f.x;
            break;
        case ProjectionMode::Separate:
            f.k.noalias() = f.x * p.key;
            f.k.rowwise() += p.keyBias.transpose();
            [[fallthrough]];
        case ProjectionMode::SharedQK:
            f.q.noalias() = f.x * p.query;
            f.q.rowwise() += p.queryBias.transpose();
            if (config.projections.mode == ProjectionMode::SharedQK) f.k = f.q;
            f.v.noalias() = f.x * p.value;
            f.v.rowwise() += p.valueBias.transpose();
            break;
    }

    // 3. Per head: scores, scaling, mask, softmax, context, as the engine (one head at a time:
    //    the batch is small).  L x L per head, concat L x dProj
    const int dh = static_cast<int>(f.q.cols()) / config.heads;
    attention::HeadOptions<double> options;
    options.scale = attention::ScoreScale::dividedBy(config.divisor());
    options.mask = &mask;
    options.checkFinite = true;
    options.threads = 1;
    const attention::AttendResult result =
        attention::attendHeads<double>({f.q, f.k, f.v, config.heads, config.heads, dh},
                                       {nullptr, nullptr, &f.weights, &f.concat}, options);
    if (result.logitsOverflow)
        throw SceneError("scores", "overflow (values too large to represent)");

    // 4. Output projection.  L x dOut
    if (config.projections.hasOutput) {
        f.output.noalias() = f.concat * p.output;
        f.output.rowwise() += p.outputBias.transpose();
    } else {
        f.output = f.concat;
    }
    return f;
}

LayerParameters backwardPass(const Scene& config, const LayerParameters& p, const ForwardPass& f,
                             const MatrixD& outputGradient) {
    LayerParameters g;
    const int L = static_cast<int>(f.x.rows());
    const int dProj = static_cast<int>(f.q.cols());
    const int dh = dProj / config.heads;
    const double divisor = config.divisor();

    // 4. Y = C·W_O + b_O  (dProj x dOut)
    MatrixD dC;
    if (config.projections.hasOutput) {
        g.output = MatrixD::Zero(p.output.rows(), p.output.cols());
        g.outputBias = VectorD::Zero(p.output.cols());
        dC = backprop::projectionBackward(f.concat, p.output, outputGradient, g.output,
                                          &g.outputBias);
    } else {
        dC = outputGradient;
    }

    // 3. Per head, backwards through context, softmax, mask and scaling. A masked entry is
    // either the constant fill (finite: no path back to the score) or has A = 0 (−inf, and every
    // entry of a fully masked row): either way its score gets no gradient, hence `allowed`.
    const MatrixD allowed = f.allowed.cast<double>().matrix();
    MatrixD dQ(L, dProj), dK(L, dProj), dV(L, dProj);
    for (int h = 0; h < config.heads; ++h) {
        auto dQh = dQ.middleCols(h * dh, dh), dKh = dK.middleCols(h * dh, dh),
             dVh = dV.middleCols(h * dh, dh);
        backprop::attentionHeadBackward(
            f.q.middleCols(h * dh, dh), f.k.middleCols(h * dh, dh), f.v.middleCols(h * dh, dh),
            f.weights[h], dC.middleCols(h * dh, dh), 1.0 / divisor, &allowed, dQh, dKh, dVh);
    }

    // 2. Projections P = X·W + b (dModel x dProj): X collects every projection's gradient.
    MatrixD dX;
    const auto zerosLike = [](const MatrixD& m) { return MatrixD::Zero(m.rows(), m.cols()); };
    switch (config.projections.mode) {
        case ProjectionMode::Identity:
            dX = dQ + dK + dV;
            break;
        case ProjectionMode::Separate:
            g.query = zerosLike(p.query);
            g.key = zerosLike(p.key);
            g.value = zerosLike(p.value);
            g.queryBias = g.keyBias = g.valueBias = VectorD::Zero(dProj);
            dX = backprop::projectionBackward(f.x, p.query, dQ, g.query, &g.queryBias);
            dX += backprop::projectionBackward(f.x, p.key, dK, g.key, &g.keyBias);
            dX += backprop::projectionBackward(f.x, p.value, dV, g.value, &g.valueBias);
            break;
        case ProjectionMode::SharedQK: {
            // W_Q makes both Q and K, so it collects both gradients.
            const MatrixD dQK = dQ + dK;
            g.query = zerosLike(p.query);
            g.value = zerosLike(p.value);
            g.queryBias = g.valueBias = VectorD::Zero(dProj);
            dX = backprop::projectionBackward(f.x, p.query, dQK, g.query, &g.queryBias);
            dX += backprop::projectionBackward(f.x, p.value, dV, g.value, &g.valueBias);
            break;
        }
    }

    // 1. Layer norm of X0.
    MatrixD dX0;
    if (config.norm.enabled) {
        g.normWeight = g.normBias = VectorD::Zero(p.normWeight.size());
        dX0 = backprop::layerNormBackward(dX, f.xHat, f.inverseDeviation, p.normWeight,
                                          g.normWeight, &g.normBias);
    } else {
        dX0 = std::move(dX);
    }
    // X0 = embeddings + positions: both get dX0 (the table only in its first L rows).
    g.embeddings = dX0;
    if (config.positional.kind == PositionalKind::Learned) {
        g.positions = MatrixD::Zero(p.positions.rows(), p.positions.cols());
        g.positions.topRows(L) = dX0;
    }
    return g;
}

double maskedMeanSquaredError(const MatrixD& output, const MatrixD& target,
                              const VectorD& rowWeight, MatrixD* gradient) {
    const double count = rowWeight.sum() * static_cast<double>(output.cols());
    const MatrixD difference = rowWeight.asDiagonal() * (output - target);
    if (gradient) *gradient = difference * (count > 0 ? 2.0 / count : 0.0);
    return count > 0 ? difference.squaredNorm() / count : 0.0;
}

// ---- Tasks ----

std::vector<int> taskTargets(TrainingTask task, const std::vector<std::string>& tokens) {
    const int L = static_cast<int>(tokens.size());
    std::vector<int> targets(static_cast<size_t>(L), -1);
    for (int i = 0; i < L; ++i) {
        switch (task) {
            case TrainingTask::PreviousToken:
                targets[i] = i - 1;  // -1 for row 0: excluded
                break;
            case TrainingTask::FirstToken:
                targets[i] = 0;
                break;
            case TrainingTask::Match:
                targets[i] = static_cast<int>(std::find(tokens.begin(), tokens.end(), tokens[i]) -
                                              tokens.begin());
                break;
        }
    }
    return targets;
}

TargetAttention bestHeadTargetAttention(const Scene& scene, const std::vector<int>& targets) {
    AttentionEngine<double> engine(scene);
    engine.compute();
    TargetAttention best;
    best.meanWeight = -1.0;
    for (int h = 0; h < engine.heads(); ++h) {
        double sum = 0.0;
        int rows = 0;
        for (int i = 0; i < static_cast<int>(targets.size()); ++i) {
            if (targets[i] < 0) continue;
            sum += engine.weights(h)(i, targets[i]);
            ++rows;
        }
        const double mean = rows > 0 ? sum / rows : 0.0;
        if (mean > best.meanWeight) best = {h, mean};
    }
    return best;
}

namespace {

// The sequence length a task generates when the scene's own is too short for it.
constexpr int kGeneratedLength = 8;

std::string letterToken(int index) {
    std::string name(1, static_cast<char>('A' + index % 26));
    if (index >= 26) name += std::to_string(index / 26);
    return name;
}

std::string joined(const std::vector<std::string>& tokens) {
    std::string text;
    for (const std::string& t : tokens)
        text += (text.empty() ? "" : " ") + t;
    return text;
}

}  // namespace

double trainerBytes(const Scene& scene) {
    const double length = std::max(scene.queryCount(), kGeneratedLength);
    const double d = scene.dModel(), dp = scene.dProj(), dOut = scene.dOut();
    const Projections& p = scene.projections;
    const double parameters =
        static_cast<double>(p.query.size() + p.key.size() + p.value.size() + p.output.size()) +
        3.0 * dp + dOut + length * d + static_cast<double>(scene.positional.table.size()) + 2.0 * d;
    const double forward = length * length / sizeof(double) + 3.0 * length * d + 3.0 * length * dp +
                           scene.heads * length * length + length * dp + length * dOut;
    const double backward = 3.0 * length * length + 4.0 * length * dp + length * d;
    const double vocabularyAndExample = 2.0 * length * d + length * dOut + 2.0 * length;
    return sceneBytes(scene) +
           (5.0 * parameters + forward + backward + vocabularyAndExample) * sizeof(double);
}

Trainer::Trainer(const Scene& scene, TrainingTask task, const TrainingOptions& options)
    : task_(task), options_(options) {
    // Before the scene is even copied: a layer too large to train is refused with its figure.
    checkFitsInMemory(trainerBytes(scene), "training in double");
    start_ = scene;
    if (scene.hasSource) {
        throw SceneError("source", "training needs self-attention; this scene has a source");
    }
    refuseVersion2Features(scene);
    if (!(options.learningRate > 0.0) || !std::isfinite(options.learningRate)) {
        throw SceneError("learning rate", "must be a positive number");
    }
    std::vector<std::string> notes;
    SplitMix64 rng(options.seed);
    const int dModel = scene.dModel();
    int length = scene.queryCount();

    // The sequence: match needs repeated tokens, so it always brings its own; the positional
    // tasks keep the scene's tokens unless there are too few to show a pattern.
    vocabulary_ = scene.embeddings;
    vocabularyTokens_ = scene.tokens;
    const bool generate = task == TrainingTask::Match || length < 4;
    if (generate) {
        const int newLength = std::max(length, kGeneratedLength);
        if (newLength != length && (!scene.mask.padding.empty() || scene.mask.allowed)) {
            throw SceneError("mask", "padding/allowed are sized for " + std::to_string(length) +
                                         " tokens; task " + trainingTaskName(task) + " needs " +
                                         std::to_string(newLength));
        }
        // Match: half as many tokens as positions, so tokens repeat; at most dModel of them, so
        // they can be mutually orthogonal (norm sqrt(dModel), like an N(0,1) draw): then "same
        // token" is a clean direction and not a matter of how close two random vectors fell.
        const int vocabulary =
            task == TrainingTask::Match ? std::max(2, std::min(newLength / 2, dModel)) : newLength;
        InitSpec normal;
        normal.distribution = InitDistribution::Normal;
        normal.std = 1.0;
        vocabulary_ = drawMatrix(rng, normal, vocabulary, dModel);
        if (vocabulary <= dModel) {
            const MatrixD draws = vocabulary_.transpose();  // dModel x V
            const MatrixD basis = Eigen::HouseholderQR<MatrixD>(draws).householderQ() *
                                  MatrixD::Identity(dModel, vocabulary);
            vocabulary_ = basis.transpose() * std::sqrt(static_cast<double>(dModel));
        }
        vocabularyTokens_.clear();
        for (int v = 0; v < vocabulary; ++v)
            vocabularyTokens_.push_back(letterToken(v));
        start_.tokens.clear();
        start_.embeddings.resize(newLength, dModel);
        for (int i = 0; i < newLength; ++i) {
            // Distinct tokens in order for the positional tasks; random draws (with repeats, as
            // the vocabulary is half the length) for match.
            const int id =
                vocabulary >= newLength ? i : static_cast<int>(rng.uniform01() * vocabulary);
            start_.tokens.push_back(vocabularyTokens_[id]);
            start_.embeddings.row(i) = vocabulary_.row(id);
        }
        notes.push_back("tokens and embeddings replaced by a generated sequence (seed " +
                        std::to_string(options.seed) + "): " + joined(start_.tokens) + ".");
        length = newLength;
    }

    // Every task depends on position (which of two equal keys, which key is i-1 or 0): give the
    // layer a learned table to shape. It starts at the sinusoidal values, so step 0 is the
    // familiar encoding and training moves it.
    Positional& positional = start_.positional;
    if (positional.kind != PositionalKind::Learned) {
        const double base = positional.kind == PositionalKind::Sinusoidal ? positional.base : 1e4;
        notes.push_back(std::string("positions: ") +
                        (positional.kind == PositionalKind::None ? "none" : "sinusoidal") +
                        " -> learned table, initialised to the sinusoidal encoding, trained.");
        positional.kind = PositionalKind::Learned;
        positional.table.resize(length, dModel);
        ops::sinusoidalPositions(positional.table, 0, base);
    } else if (positional.table.rows() < length) {
        const int have = static_cast<int>(positional.table.rows());
        positional.table.conservativeResize(length, dModel);
        ops::sinusoidalPositions(positional.table.bottomRows(length - have), have, positional.base);
        notes.push_back("positions: learned table extended to " + std::to_string(length) +
                        " rows with sinusoidal values.");
    }

    // Identity mode has no weights to learn: start from W = I, which computes the same layer.
    Projections& proj = start_.projections;
    if (proj.mode == ProjectionMode::Identity) {
        proj.mode = ProjectionMode::Separate;
        proj.query = proj.key = proj.value = MatrixD::Identity(dModel, dModel);
        proj.queryBias = proj.keyBias = proj.valueBias = VectorD::Zero(dModel);
        notes.push_back("projections: identity -> separate W_Q = W_K = W_V = I, trained.");
    }
    start_.init.reset();
    if (!start_.title.empty()) start_.title += " ";
    start_.title += std::string("(trained: ") + trainingTaskName(task) + ")";

    initial_ = parametersOf(start_);
    own_ = makeExample(start_.embeddings, start_.tokens);
    const BoolMatrix allowed = allowedMatrix(start_.mask, length, length);
    for (int i = 0; i < length; ++i) {
        const int t = own_.targets[i];
        if (t >= 0 && !allowed(i, t)) {
            throw SceneError("mask", "query " + std::to_string(i) + " cannot see key " +
                                         std::to_string(t) + ", which task " +
                                         trainingTaskName(task) + " needs");
        }
    }
    for (const std::string& n : notes)
        note_ += (note_.empty() ? "" : "\n") + n;
    reset();
}

Trainer::Example Trainer::makeExample(const MatrixD& embeddings,
                                      const std::vector<std::string>& tokens) const {
    Example e;
    e.embeddings = embeddings;
    e.targets = taskTargets(task_, tokens);
    const int L = static_cast<int>(embeddings.rows());
    e.rowWeight = VectorD::Zero(L);
    // The target: the output the starting layer would give if every head put all its weight on
    // the target key, i.e. row t(i) of V·W_O + b_O with the starting weights. Fixed, so
    // shrinking V or W_O cannot fake a small loss.
    // Straight from start_ (which holds the starting numbers), without copying the weights: for
    // a 768-wide layer a copy per sequence dominated the step.
    const Projections& proj = start_.projections;
    const MatrixD x = prepareInputs(start_, embeddings);  // L x dModel
    MatrixD valueOutput = x;                              // L x dProj
    if (proj.mode != ProjectionMode::Identity) {
        valueOutput = x * proj.value;
        valueOutput.rowwise() += initial_.valueBias.transpose();
    }
    if (proj.hasOutput) {
        valueOutput = (valueOutput * proj.output).eval();
        valueOutput.rowwise() += initial_.outputBias.transpose();
    }
    e.target = MatrixD::Zero(L, valueOutput.cols());
    for (int i = 0; i < L; ++i) {
        if (e.targets[i] < 0) continue;
        e.rowWeight(i) = 1.0;
        e.target.row(i) = valueOutput.row(e.targets[i]);
    }
    return e;
}

Trainer::Example Trainer::randomExample() {
    const int L = static_cast<int>(own_.embeddings.rows());
    const int V = static_cast<int>(vocabulary_.rows());
    MatrixD embeddings(L, vocabulary_.cols());
    std::vector<std::string> tokens;
    for (int i = 0; i < L; ++i) {
        const int id = std::min(V - 1, static_cast<int>(rng_.uniform01() * V));
        // By position for the positional tasks: equal rows of the scene under different texts
        // must not become a "match".
        tokens.push_back(vocabularyTokens_[id]);
        embeddings.row(i) = vocabulary_.row(id);
    }
    return makeExample(embeddings, tokens);
}

void Trainer::reset() {
    params_ = initial_;
    steps_ = 0;
    rng_ = SplitMix64(options_.seed ^ 0x5eed5eed5eedULL);  // a stream apart from the draws above
    auto zerosLike = [](const LayerParameters& p) {
        LayerParameters z = p;
        for (ParameterSpan s : parameterSpans(z))
            Eigen::Map<VectorD>(s.data, s.size).setZero();
        return z;
    };
    firstMoment_ = zerosLike(params_);
    secondMoment_ = zerosLike(params_);
}

double Trainer::loss() const {
    LayerParameters p = params_;
    p.embeddings = own_.embeddings;
    return maskedMeanSquaredError(forwardPass(start_, p).output, own_.target, own_.rowWeight);
}

double Trainer::step() {
    // Mean loss and mean gradient over the batch: the scene's sequence, then random ones.
    LayerParameters gradient;
    double batchLoss = 0.0;
    for (int b = 0; b < kSequencesPerStep; ++b) {
        const Example e = b == 0 ? own_ : randomExample();
        params_.embeddings = e.embeddings;
        const ForwardPass f = forwardPass(start_, params_);
        MatrixD outputGradient;
        batchLoss += maskedMeanSquaredError(f.output, e.target, e.rowWeight, &outputGradient);
        LayerParameters g = backwardPass(start_, params_, f, outputGradient / kSequencesPerStep);
        if (b == 0) {
            gradient = std::move(g);
            continue;
        }
        std::vector<ParameterSpan> sum = parameterSpans(gradient), add = parameterSpans(g);
        for (size_t n = 0; n < sum.size(); ++n)
            Eigen::Map<VectorD>(sum[n].data, sum[n].size) +=
                Eigen::Map<VectorD>(add[n].data, add[n].size);
    }
    params_.embeddings = own_.embeddings;

    ++steps_;
    const adam::StepSize size = adam::stepSize(options_.learningRate, steps_, options_.totalSteps);
    std::vector<ParameterSpan> p = parameterSpans(params_);
    std::vector<ParameterSpan> g = parameterSpans(gradient);
    std::vector<ParameterSpan> m = parameterSpans(firstMoment_);
    std::vector<ParameterSpan> v = parameterSpans(secondMoment_);
    for (size_t n = 0; n < p.size(); ++n) {
        if (p[n].group == ParameterGroup::Embeddings) continue;  // the input, not a weight
        adam::update({p[n].data, p[n].size}, {g[n].data, g[n].size}, {m[n].data, m[n].size},
                     {v[n].data, v[n].size}, size);
    }
    return batchLoss / kSequencesPerStep;
}

Scene Trainer::scene() const {
    Scene s = start_;
    applyParameters(params_, s);
    return s;
}

}  // namespace ae
