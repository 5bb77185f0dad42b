#include "core/training/model_training.h"

#include <algorithm>
#include <cmath>

#include "core/init_draw.h"
#include "core/model/model_analysis.h"
#include "core/ops.h"
#include "core/training/adam.h"
#include "core/training/backprop.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ae::model {

const std::string& trainingText() {
    // The opening of Lewis Carroll, "Alice's Adventures in Wonderland" (1865), chapter I: public
    // domain, plain ASCII, and repetitive enough ("Alice", "rabbit", "down") for a small model
    // to find its bigrams and copies within a few hundred steps.
    static const std::string text =
        "Alice was beginning to get very tired of sitting by her sister on the bank, and of "
        "having nothing to do: once or twice she had peeped into the book her sister was "
        "reading, but it had no pictures or conversations in it, \"and what is the use of a "
        "book,\" thought Alice \"without pictures or conversations?\"\n"
        "So she was considering in her own mind (as well as she could, for the hot day made her "
        "feel very sleepy and stupid), whether the pleasure of making a daisy-chain would be "
        "worth the trouble of getting up and picking the daisies, when suddenly a White Rabbit "
        "with pink eyes ran close by her.\n"
        "There was nothing so very remarkable in that; nor did Alice think it so very much out "
        "of the way to hear the Rabbit say to itself, \"Oh dear! Oh dear! I shall be late!\" "
        "(when she thought it over afterwards, it occurred to her that she ought to have "
        "wondered at this, but at the time it all seemed quite natural); but when the Rabbit "
        "actually took a watch out of its waistcoat-pocket, and looked at it, and then hurried "
        "on, Alice started to her feet, for it flashed across her mind that she had never before "
        "seen a rabbit with either a waistcoat-pocket, or a watch to take out of it, and burning "
        "with curiosity, she ran across the field after it, and fortunately was just in time to "
        "see it pop down a large rabbit-hole under the hedge.\n"
        "In another moment down went Alice after it, never once considering how in the world "
        "she was to get out again.\n"
        "The rabbit-hole went straight on like a tunnel for some way, and then dipped suddenly "
        "down, so suddenly that Alice had not a moment to think about stopping herself before "
        "she found herself falling down a very deep well.\n";
    return text;
}

namespace {

constexpr int kEvaluationSequences = 8;
constexpr int kProbePeriod = 20;  // `heads --induction-random 20`'s
// Streams apart from the weights' draw (which uses the seed itself).
constexpr std::uint64_t kBatchStream = 0x5eed5eed5eedULL;
constexpr std::uint64_t kEvaluationStream = 0xe7a1e7a1e7a1ULL;
constexpr std::uint64_t kProbeStream = 0x9a0be9a0beULL;

long long drawId(SplitMix64& rng, int vocab) {
    return std::min<long long>(vocab - 1, static_cast<long long>(rng.uniform01() * vocab));
}

bool endsWith(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

using ConstMap = Eigen::Map<const MatrixD>;
using VectorMap = Eigen::Map<const VectorD>;

}  // namespace

std::string checkTrainingOptions(const ModelTrainingOptions& o) {
    const FamilyRow* row = familyRowNamed(o.family);
    if (!row || row->trainingChoice == 0) return "--family: expected " + trainableFamilyNames();
    if (o.layers < 1 || o.layers > 48)
        return "--model: expected 1 to 48 layers, got " + std::to_string(o.layers);
    if (o.heads < 1 || o.heads > 64)
        return "--heads: expected 1 to 64, got " + std::to_string(o.heads);
    if (o.hidden < 1 || o.hidden > 2048)
        return "--d-model: expected 1 to 2048, got " + std::to_string(o.hidden);
    if (o.hidden % o.heads != 0) {
        return "--d-model: " + std::to_string(o.hidden) + " is not a multiple of --heads " +
               std::to_string(o.heads);
    }
    if (row->architecture.positions == PositionKind::Rotary && (o.hidden / o.heads) % 2 != 0) {
        return "--d-model: rotary positions need an even head size, and " +
               std::to_string(o.hidden) + " / " + std::to_string(o.heads) + " heads is " +
               std::to_string(o.hidden / o.heads);
    }
    if (o.vocab < 2 || o.vocab > 65536)
        return "--vocab: expected 2 to 65536, got " + std::to_string(o.vocab);
    if (o.task == ModelTask::CopyNext && o.vocab < 128) {
        return "--vocab: copy-next reads ASCII text, so it needs at least 128 tokens, got " +
               std::to_string(o.vocab);
    }
    const int minLength = o.task == ModelTask::Induction ? 4 : 2;
    const int maxLength =
        o.task == ModelTask::CopyNext ? static_cast<int>(trainingText().size()) : 4096;
    if (o.length < minLength || o.length > maxLength) {
        return "--length: expected " + std::to_string(minLength) + " to " +
               std::to_string(maxLength) + " for " + modelTaskName(o.task) + ", got " +
               std::to_string(o.length);
    }
    if (o.batch < 1 || o.batch > 4096)
        return "batch: expected 1 to 4096 sequences, got " + std::to_string(o.batch);
    if (!(o.learningRate > 0) || !std::isfinite(o.learningRate))
        return "--lr: expected a positive number";
    if (o.previousTokenEvery < 0)
        return "--previous-token-every: expected 0 (never) or a positive step count";
    if (!(o.ropeTheta > 1) || !std::isfinite(o.ropeTheta))
        return "--rope-theta: expected a number above 1";
    if (!(o.initStd > 0) || !std::isfinite(o.initStd))
        return "init std: expected a positive number";
    return "";
}

Config trainingConfig(const ModelTrainingOptions& o) {
    const FamilyRow* row = familyRowNamed(o.family);
    if (!row || row->trainingChoice == 0)
        throw ModelError("--family: expected " + trainableFamilyNames());
    Config c;
    c.family = row->family;
    c.hidden = o.hidden;
    c.layers = o.layers;
    c.heads = c.kvHeads = o.heads;
    c.headDim = o.hidden / o.heads;
    c.vocab = o.vocab;
    // Attention-only: one MLP unit of zeros (model_training.h).
    c.intermediate = o.mlp ? 4 * o.hidden : 1;
    c.bosToken = -1;  // the tasks start with no BOS, and so does the induction probe
    if (row->architecture.positions == PositionKind::Learned) {
        // GPT2Config's.
        c.positions = o.length;
        c.activation = Activation::GeluTanh;
        c.normEps = 1e-5;
        c.tieWordEmbeddings = true;  // GPT2LMHeadModel ties lm_head to wte
    } else {
        c.positions = 0;
        c.activation = Activation::Silu;
        c.normEps = 1e-5;
        c.tieWordEmbeddings = false;  // LlamaConfig's default
        c.rope.theta = o.ropeTheta;
    }
    return c;
}

double trainerBytes(const ModelTrainingOptions& o) {
    const Config c = trainingConfig(o);
    ModelWeights shapes;
    double parameters = 0;
    for (const TensorSpec& spec : tensorSpecs(c, shapes)) {
        double count = 1;
        for (long long s : spec.shape)
            count *= static_cast<double>(s);
        parameters += count;
    }
    const double T = o.length, width = std::max(c.hidden, c.intermediate);
    const double perSequence =
        c.layers * (12.0 * T * width + c.heads * T * T) + 2.0 * T * c.vocab + 2.0 * T * c.hidden;
    return ((3.0 + o.batch) * parameters + o.batch * perSequence) * sizeof(double);
}

ModelTrainer::ModelTrainer(const ModelTrainingOptions& options) : options_(options) {
    const std::string problem = checkTrainingOptions(options);
    if (!problem.empty()) throw ModelError(problem);
    const double bytes = trainerBytes(options), available = physicalMemoryBytes();
    if (available > 0 && bytes > available) {
        throw ModelError("training needs about " + std::to_string(std::llround(bytes / 1048576.0)) +
                         " MiB, more than this machine's " +
                         std::to_string(std::llround(available / 1048576.0)) +
                         " MiB (try a smaller --d-model, --vocab, --length or --batch)");
    }
    Config& c = model_.config;
    c = trainingConfig(options);
    model_.folder = "(training)";
    const std::vector<TensorSpec> specs = tensorSpecs(c, model_.weights);
    const std::string prefix = familyRow(c.family).prefixes.front();
    SplitMix64 rng(options.seed);
    InitSpec normal;
    normal.distribution = InitDistribution::Normal;
    for (const TensorSpec& spec : specs) {
        const long long rows = spec.shape.size() == 2 ? spec.shape[0] : 1;
        const long long cols = spec.shape.back();
        const std::string name = spec.topLevel ? spec.name : prefix + spec.name;
        // Attention-only: the MLP and its pre-norm (which feeds nothing else) stay as they are.
        const bool mlp = spec.name.find("mlp.") != std::string::npos ||
                         endsWith(spec.name, "ln_2.weight") || endsWith(spec.name, "ln_2.bias") ||
                         endsWith(spec.name, "post_attention_layernorm.weight");
        const bool norm = endsWith(spec.name, "ln_1.weight") ||
                          endsWith(spec.name, "ln_2.weight") || spec.name == "ln_f.weight" ||
                          endsWith(spec.name, "layernorm.weight") || spec.name == "norm.weight";
        MatrixD value;
        if (norm) {
            value = MatrixD::Ones(rows, cols);
        } else if (mlp && !options.mlp) {
            value = MatrixD::Zero(rows, cols);
        } else if (endsWith(spec.name, ".bias")) {
            value = MatrixD::Zero(rows, cols);
        } else {
            // GPT-2's init: N(0, 0.02), the projections into the residual stream shrunk by
            // √(2·layers) so the stream's size does not grow with depth.
            const bool intoResidual = endsWith(spec.name, "c_proj.weight") ||
                                      endsWith(spec.name, "o_proj.weight") ||
                                      endsWith(spec.name, "down_proj.weight");
            normal.std = options.initStd / (intoResidual ? std::sqrt(2.0 * options.layers) : 1.0);
            value = drawMatrix(rng, normal, static_cast<int>(rows), static_cast<int>(cols));
        }
        values_.push_back(std::move(value));
        names_.push_back(name);
        trained_.push_back(!(mlp && !options.mlp));
        TensorRef& ref = *spec.slot;
        ref.name = name;
        ref.file = model_.folder;
        ref.dtype = DType::F64;
        ref.rows = rows;
        ref.cols = cols;
    }
    // Pointers last: values_ no longer reallocates.
    for (std::size_t i = 0; i < specs.size(); ++i) {
        specs[i].slot->data = reinterpret_cast<const unsigned char*>(values_[i].data());
        dataOf_.push_back(specs[i].slot->data);
    }
    if (c.tieWordEmbeddings) model_.weights.lmHead = model_.weights.tokenEmbedding;
    for (const MatrixD& v : values_)
        model_.storedBytes += static_cast<double>(v.size()) * sizeof(double);
    for (const MatrixD& v : values_) {
        firstMoment_.push_back(MatrixD::Zero(v.rows(), v.cols()));
        secondMoment_.push_back(MatrixD::Zero(v.rows(), v.cols()));
    }

    SplitMix64 evaluation(options.seed ^ kEvaluationStream);
    for (int s = 0; s < kEvaluationSequences; ++s)
        evaluation_.push_back(drawExample(&evaluation));
    SplitMix64 probe(options.seed ^ kProbeStream);
    probePeriod_ = std::min(kProbePeriod, options.length / 2);
    for (int i = 0; i < probePeriod_; ++i)
        probeIds_.push_back(drawId(probe, options.vocab));
    const std::vector<long long> once = probeIds_;
    probeIds_.insert(probeIds_.end(), once.begin(), once.end());
    rng_ = SplitMix64(options.seed ^ kBatchStream);
}

int ModelTrainer::index(const TensorRef& slot) const {
    if (!slot.present()) return -1;
    const auto found = std::find(dataOf_.begin(), dataOf_.end(), slot.data);
    return found == dataOf_.end() ? -1 : static_cast<int>(found - dataOf_.begin());
}

TrainingExample ModelTrainer::drawExample(SplitMix64* source, std::optional<ModelTask> task) {
    SplitMix64& rng = source ? *source : rng_;
    const ModelTask kind = task.value_or(options_.task);
    const int V = options_.vocab, L = options_.length;
    TrainingExample e;
    switch (kind) {
        case ModelTask::Induction: {
            // The period varies: with one fixed N a head could attend to "N − 1 back" by
            // position alone (rotary makes that easy) and never learn induction, which would
            // then fail on any other period (the probe's 20, `heads --induction-random`).
            const int shortest = std::max(2, L / 8), longest = L / 2;
            const int n =
                shortest + std::min(longest - shortest,
                                    static_cast<int>(rng.uniform01() * (longest - shortest + 1)));
            for (int i = 0; i < n; ++i)
                e.ids.push_back(drawId(rng, V));
            for (int i = 0; i < n; ++i)
                e.ids.push_back(e.ids[static_cast<std::size_t>(i)]);
            e.targets.assign(e.ids.size(), -1);
            for (int i = n; i + 1 < 2 * n; ++i)
                e.targets[static_cast<std::size_t>(i)] = e.ids[static_cast<std::size_t>(i) + 1];
            break;
        }
        case ModelTask::CopyNext: {
            const std::string& text = trainingText();
            const auto starts = static_cast<int>(text.size()) - L + 1;
            const int start = std::min(starts - 1, static_cast<int>(rng.uniform01() * starts));
            for (int i = 0; i < L; ++i)
                e.ids.push_back(
                    static_cast<unsigned char>(text[static_cast<std::size_t>(start + i)]));
            e.targets.assign(e.ids.size(), -1);
            for (int i = 0; i + 1 < L; ++i)
                e.targets[static_cast<std::size_t>(i)] = e.ids[static_cast<std::size_t>(i) + 1];
            break;
        }
        case ModelTask::PreviousToken:
        case ModelTask::FirstToken:
        case ModelTask::Match: {
            for (int i = 0; i < L; ++i)
                e.ids.push_back(drawId(rng, V));
            e.targets.assign(e.ids.size(), -1);
            for (int i = 0; i < L; ++i) {
                const auto u = static_cast<std::size_t>(i);
                if (kind == ModelTask::PreviousToken) {
                    if (i >= 1) e.targets[u] = e.ids[u - 1];
                } else if (kind == ModelTask::FirstToken) {
                    e.targets[u] = e.ids[0];
                } else {
                    for (int j = i - 1; j >= 0; --j) {
                        if (e.ids[static_cast<std::size_t>(j)] == e.ids[u]) {
                            e.targets[u] = e.ids[static_cast<std::size_t>(j) + 1];
                            break;
                        }
                    }
                }
            }
            break;
        }
    }
    return e;
}

double ModelTrainer::backward(const std::vector<long long>& ids,
                              const std::vector<long long>& targets, const ModelRun<double>& run,
                              const ForwardTape<double>& tape, std::vector<MatrixD>* gradient,
                              double scale) const {
    const Config& c = model_.config;
    const ModelWeights& w = model_.weights;
    // The trainer implements its rows' two architectures (familyTable's trainingChoice): GPT-2's
    // (LayerNorm, fused Conv1D q k v, learned positions, plain MLP) and Llama's (RMSNorm,
    // separate q k v, rotary, gated MLP). Their norm tells them apart.
    const bool gpt2 = c.architecture().norm == NormType::LayerNorm;
    const auto T = static_cast<Eigen::Index>(ids.size());
    const Eigen::Index d = c.hidden, hd = c.headDim, V = c.vocab;

    // Cross-entropy, mean over the positions with a target: loss_i = logsumexp(z_i) − z_i[t_i],
    // dloss_i/dz_i = softmax(z_i) − onehot(t_i).
    int count = 0;
    for (long long t : targets)
        count += t >= 0;
    if (count == 0) return 0.0;
    double loss = 0.0;
    MatrixD dLogits = MatrixD::Zero(T, V);
    for (Eigen::Index i = 0; i < T; ++i) {
        const long long t = targets[static_cast<std::size_t>(i)];
        if (t < 0) continue;
        if (t >= V) throw ModelError("target " + std::to_string(t) + " is not in the vocabulary");
        const double top = run.logits.row(i).maxCoeff();
        const Eigen::RowVectorXd e = (run.logits.row(i).array() - top).exp().matrix();
        const double sum = e.sum();
        loss += top + std::log(sum) - run.logits(i, t);
        dLogits.row(i) = e / sum;
        dLogits(i, t) -= 1.0;
    }
    loss /= count;
    if (!gradient) return loss;
    dLogits *= scale / count;

    std::vector<MatrixD>& g = *gradient;
    auto matrix = [this](const TensorRef& t) {
        return ConstMap(values_[index(t)].data(), t.rows, t.cols);
    };
    auto vector = [this](const TensorRef& t) {
        return VectorD(VectorMap(values_[index(t)].data(), t.count()));
    };
    auto addVector = [&](const TensorRef& t, const VectorD& v) {
        g[static_cast<std::size_t>(index(t))] += v.transpose();
    };
    auto grad = [&](const TensorRef& t) -> MatrixD& {
        return g[static_cast<std::size_t>(index(t))];
    };
    // Back through a pre-norm: returns dLoss/d(its input).
    auto normBackward = [&](const MatrixD& dy, const MatrixD& in, const NormTape<double>& norm,
                            const TensorRef& gamma, const TensorRef& beta) {
        VectorD dGamma = VectorD::Zero(d), dBeta = VectorD::Zero(d);
        MatrixD dx = gpt2 ? backprop::layerNormBackward(dy, norm.normalised, norm.inverseDeviation,
                                                        vector(gamma), dGamma, &dBeta)
                          : backprop::rmsNormBackward(dy, in, vector(gamma), c.normEps, dGamma);
        addVector(gamma, dGamma);
        if (gpt2) addVector(beta, dBeta);
        return dx;
    };

    // logits = x_f·W_lmᵀ (W_lm V x d; tied: the token table, which then collects both uses).
    MatrixD dx = backprop::linearBackward(run.finalHidden, matrix(w.lmHead), dLogits,
                                          grad(w.lmHead), nullptr);
    MatrixD dh = normBackward(dx, tape.finalIn, tape.finalNorm, w.finalNorm, w.finalNormBias);

    for (int l = c.layers - 1; l >= 0; --l) {
        const LayerWeights& lw = w.layers[static_cast<std::size_t>(l)];
        const LayerRecord<double>& record = run.layers[static_cast<std::size_t>(l)];
        const LayerTape<double>& kept = tape.layers[static_cast<std::size_t>(l)];
        if (options_.mlp) {
            // h_out = h_mid + MLP(norm2(h_mid)): dh flows to h_mid directly and through the MLP.
            MatrixD dx2;
            if (gpt2) {
                VectorD dDownBias = VectorD::Zero(d), dUpBias = VectorD::Zero(c.intermediate);
                const MatrixD dActivated = backprop::projectionBackward(
                    kept.activated, matrix(lw.down), dh, grad(lw.down), &dDownBias);
                const MatrixD dUp = backprop::geluTanhBackward(kept.up, dActivated);
                dx2 = backprop::projectionBackward(kept.mlpNormed, matrix(lw.up), dUp, grad(lw.up),
                                                   &dUpBias);
                addVector(lw.downBias, dDownBias);
                addVector(lw.upBias, dUpBias);
            } else {
                const MatrixD dActivated = backprop::linearBackward(kept.activated, matrix(lw.down),
                                                                    dh, grad(lw.down), nullptr);
                // a = silu(gate) ⊙ up
                MatrixD silu = kept.gate;
                auto s = silu.array();
                ops::silu(s);
                const MatrixD dUp = (dActivated.array() * silu.array()).matrix();
                const MatrixD dGate = backprop::siluBackward(
                    kept.gate, (dActivated.array() * kept.up.array()).matrix());
                dx2 = backprop::linearBackward(kept.mlpNormed, matrix(lw.gate), dGate,
                                               grad(lw.gate), nullptr);
                dx2 += backprop::linearBackward(kept.mlpNormed, matrix(lw.up), dUp, grad(lw.up),
                                                nullptr);
            }
            dh += normBackward(dx2, kept.hiddenMid, kept.mlpNorm, lw.norm2, lw.norm2Bias);
        }
        // h_mid = h_in + output(context): dh flows to h_in directly and through the attention.
        MatrixD dContext;
        if (gpt2) {
            VectorD dOutputBias = VectorD::Zero(d);
            dContext = backprop::projectionBackward(kept.context, matrix(lw.output), dh,
                                                    grad(lw.output), &dOutputBias);
            addVector(lw.outputBias, dOutputBias);
        } else {
            dContext = backprop::linearBackward(kept.context, matrix(lw.output), dh,
                                                grad(lw.output), nullptr);
        }
        MatrixD dq(T, d), dk(T, d), dv(T, d);
        const double attentionScale = c.attentionScale(l);
        for (int head = 0; head < c.heads; ++head) {
            auto dqHead = dq.middleCols(head * hd, hd), dkHead = dk.middleCols(head * hd, hd),
                 dvHead = dv.middleCols(head * hd, hd);
            backprop::attentionHeadBackward(
                record.query.middleCols(head * hd, hd), record.key.middleCols(head * hd, hd),
                record.value.middleCols(head * hd, hd),
                record.weights[static_cast<std::size_t>(head)], dContext.middleCols(head * hd, hd),
                attentionScale, nullptr, dqHead, dkHead, dvHead);
            if (!gpt2) {
                // q and k were rotated after the projection: back by the negative angle.
                backprop::rotateHalfBackward(dqHead, tape.angles);
                backprop::rotateHalfBackward(dkHead, tape.angles);
            }
        }
        MatrixD dx1;
        if (gpt2) {
            MatrixD dFused(T, 3 * d);
            dFused << dq, dk, dv;
            VectorD dBias = VectorD::Zero(3 * d);
            dx1 = backprop::projectionBackward(kept.attentionNormed, matrix(lw.qkv), dFused,
                                               grad(lw.qkv), &dBias);
            addVector(lw.qkvBias, dBias);
        } else {
            const MatrixD& x1 = kept.attentionNormed;
            dx1 = backprop::linearBackward(x1, matrix(lw.query), dq, grad(lw.query), nullptr);
            dx1 += backprop::linearBackward(x1, matrix(lw.key), dk, grad(lw.key), nullptr);
            dx1 += backprop::linearBackward(x1, matrix(lw.value), dv, grad(lw.value), nullptr);
        }
        dh += normBackward(dx1, record.hiddenIn, kept.attentionNorm, lw.norm1, lw.norm1Bias);
    }
    // h_0 = wte[ids] (+ wpe[0..T)).
    MatrixD& dTokens = grad(w.tokenEmbedding);
    for (Eigen::Index i = 0; i < T; ++i)
        dTokens.row(ids[static_cast<std::size_t>(i)]) += dh.row(i);
    if (gpt2) grad(w.positionEmbedding).topRows(T) += dh;
    return loss;
}

double ModelTrainer::lossAndGradient(const TrainingExample& example, std::vector<MatrixD>* gradient,
                                     double gradientScale) const {
    if (example.targets.size() != example.ids.size())
        throw ModelError("training example: one target per token expected");
    ForwardTape<double> tape;
    const ModelRun<double> run = runModelForTraining(model_, example.ids, tape, !options_.mlp);
    return backward(example.ids, example.targets, run, tape, gradient, gradientScale);
}

MatrixD ModelTrainer::logits(const std::vector<long long>& ids) const {
    ForwardTape<double> tape;
    return runModelForTraining(model_, ids, tape, !options_.mlp).logits;
}

double ModelTrainer::loss() const {
    double sum = 0.0;
    for (const TrainingExample& e : evaluation_)
        sum += lossAndGradient(e, nullptr);
    return sum / static_cast<double>(evaluation_.size());
}

double ModelTrainer::step() {
    // The batch is drawn first, in order, so the run depends on the seed alone; each sequence's
    // gradient goes to its own buffer and the buffers are summed in sequence order, so the
    // threads' partition cannot change a bit of the result.
    const int B = options_.batch;
    const int every = options_.previousTokenEvery;
    const ModelTask task =
        every > 0 && (steps_ + 1) % every == 0 ? ModelTask::PreviousToken : options_.task;
    std::vector<TrainingExample> batch;
    for (int b = 0; b < B; ++b)
        batch.push_back(drawExample(nullptr, task));
    std::vector<std::vector<MatrixD>> gradients(static_cast<std::size_t>(B));
    std::vector<double> losses(static_cast<std::size_t>(B), 0.0);
    std::vector<std::string> failures(static_cast<std::size_t>(B));
#pragma omp parallel for schedule(dynamic, 1)
    for (int b = 0; b < B; ++b) {
        std::vector<MatrixD>& g = gradients[static_cast<std::size_t>(b)];
        for (const MatrixD& v : values_)
            g.push_back(MatrixD::Zero(v.rows(), v.cols()));
        try {
            losses[static_cast<std::size_t>(b)] =
                lossAndGradient(batch[static_cast<std::size_t>(b)], &g, 1.0 / B);
        } catch (const std::exception& error) {
            failures[static_cast<std::size_t>(b)] = error.what();
        }
    }
    for (const std::string& failure : failures)
        if (!failure.empty()) throw ModelError(failure);
    for (int b = 1; b < B; ++b)
        for (std::size_t i = 0; i < values_.size(); ++i)
            gradients[0][i] += gradients[static_cast<std::size_t>(b)][i];
    const std::vector<MatrixD>& gradient = gradients[0];
    double batchLoss = 0.0;
    for (double l : losses)
        batchLoss += l;
    batchLoss /= B;
    if (!std::isfinite(batchLoss))
        throw ModelError("step " + std::to_string(steps_ + 1) +
                         ": the loss is not finite (try a smaller --lr)");

    ++steps_;
    const adam::StepSize size = adam::stepSize(options_.learningRate, steps_, options_.totalSteps);
    for (std::size_t i = 0; i < values_.size(); ++i) {
        if (!trained_[i]) continue;
        const auto n = values_[i].size();
        adam::update({values_[i].data(), n}, {gradient[i].data(), n}, {firstMoment_[i].data(), n},
                     {secondMoment_[i].data(), n}, size);
    }
    return batchLoss;
}

HeadScores ModelTrainer::probeHeads() const {
    const ModelRun<double> run = runModel<double>(model_, probeIds_);
    const std::vector<HeadSummary> summaries = summarizeHeads(run);
    HeadScores scores;
    scores.induction = inductionScores(run, 0, probePeriod_);
    for (const HeadSummary& s : summaries)
        scores.previousToken.push_back(s.previousToken);
    const auto best = [](const std::vector<double>& v) {
        return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
    };
    scores.bestPreviousToken = best(scores.previousToken);
    scores.bestInduction = best(scores.induction);
    return scores;
}

}  // namespace ae::model
