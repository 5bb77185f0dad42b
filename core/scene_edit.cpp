#include "core/scene_edit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/init_draw.h"
#include "core/word_vectors.h"

namespace ae {
namespace {

constexpr std::uint64_t kLearnedTableSeed = 0x1ea27ed7ab1e5eedULL;

// `old` as rows x cols: the overlap kept, every other cell taken from `fill` (at least that big).
MatrixD resized(const MatrixD& old, int rows, int cols, const MatrixD& fill) {
    MatrixD out = fill.topLeftCorner(rows, cols);
    const Eigen::Index r = std::min<Eigen::Index>(rows, old.rows());
    const Eigen::Index c = std::min<Eigen::Index>(cols, old.cols());
    out.topLeftCorner(r, c) = old.topLeftCorner(r, c);
    return out;
}

VectorD resized(const VectorD& old, int size, double fill) {
    VectorD out = VectorD::Constant(size, fill);
    const Eigen::Index n = std::min<Eigen::Index>(size, old.size());
    out.head(n) = old.head(n);
    return out;
}

// init with d_model drew the embeddings (and the source's): saving would write init instead of
// them, so it must go once they change. Without d_model it only describes the projections.
void dropInitIfEmbeddingsDrawn(Scene& scene) {
    if (scene.init && scene.init->dModel) scene.init.reset();
}

bool isSourceStream(const Scene& scene, Stream stream) {
    return stream == Stream::Source && scene.hasSource;
}

void ensureLearnedRows(Scene& scene) {
    Positional& pos = scene.positional;
    if (pos.kind != PositionalKind::Learned) return;
    const int needed = std::max(scene.queryCount(), scene.keyCount());
    const int d = scene.dModel();
    if (pos.table.cols() != d)
        pos.table = resized(pos.table, static_cast<int>(pos.table.rows()), d,
                            learnedPositionRows(0, static_cast<int>(pos.table.rows()), d));
    const int have = static_cast<int>(pos.table.rows());
    if (have >= needed) return;
    MatrixD grown(needed, d);
    grown.topRows(have) = pos.table;
    grown.bottomRows(needed - have) = learnedPositionRows(have, needed - have, d);
    pos.table = std::move(grown);
}

// After an edit that changed d_head: rotary positions need it even (the largest such head count
// up to the current one, or no rotation if the width is odd), the q/k norm weights follow it
// (new values 1), and a switched-off head past the new head count is gone with its head.
void settleHeadFeatures(Scene& scene) {
    const int dProj = scene.dProj();
    if (scene.rotary && scene.dHead() % 2 != 0) {
        int heads = scene.heads;
        while (heads > 0 && (dProj % heads != 0 || (dProj / heads) % 2 != 0))
            --heads;
        if (heads > 0) {
            scene.heads = heads;
        } else {
            scene.rotary.reset();
        }
    }
    HeadNorm& norm = scene.qkNorm;
    if (norm.enabled && norm.queryWeight.size() != scene.dHead()) {
        norm.queryWeight = resized(norm.queryWeight, scene.dHead(), 1.0);
        norm.keyWeight = resized(norm.keyWeight, scene.dHead(), 1.0);
    }
    std::vector<int>& off = scene.ablation.heads;
    off.erase(std::remove_if(off.begin(), off.end(), [&](int h) { return h >= scene.heads; }),
              off.end());
}

}  // namespace

void ungroupKeyValueHeads(Scene& scene) {
    if (!scene.kvHeads) return;
    Projections& p = scene.projections;
    const int dh = scene.dHead();
    MatrixD key(p.key.rows(), scene.dProj()), value(p.value.rows(), scene.dProj());
    VectorD keyBias(scene.dProj()), valueBias(scene.dProj());
    for (int h = 0; h < scene.heads; ++h) {
        const int from = scene.keyValueHeadOf(h) * dh;
        key.middleCols(h * dh, dh) = p.key.middleCols(from, dh);
        value.middleCols(h * dh, dh) = p.value.middleCols(from, dh);
        keyBias.segment(h * dh, dh) = p.keyBias.segment(from, dh);
        valueBias.segment(h * dh, dh) = p.valueBias.segment(from, dh);
    }
    p.key = std::move(key);
    p.value = std::move(value);
    p.keyBias = std::move(keyBias);
    p.valueBias = std::move(valueBias);
    scene.kvHeads.reset();
}

int largestDivisorAtMost(int n, int limit) {
    for (int k = std::min(n, limit); k > 1; --k) {
        if (n % k == 0) return k;
    }
    return 1;
}

MatrixD learnedPositionRows(int firstRow, int rows, int dModel) {
    InitSpec spec;
    spec.std = 0.5;
    MatrixD out(rows, dModel);
    for (int r = 0; r < rows; ++r) {
        // One generator per position, seeded through SplitMix64 itself so that neighbouring
        // positions do not start from neighbouring states.
        SplitMix64 seeder(kLearnedTableSeed + static_cast<std::uint64_t>(firstRow + r));
        SplitMix64 rng(seeder.next());
        out.row(r) = drawMatrix(rng, spec, 1, dModel);
    }
    return out;
}

InitSpec inferredDrawSpec(const Scene& scene) {
    if (scene.init) return *scene.init;
    InitSpec spec;
    const Projections& p = scene.projections;
    double low = 0, high = 0;
    bool any = false, whole = true;
    for (const MatrixD* m : {&p.query, &p.key, &p.value, &p.output}) {
        if (m->size() == 0) continue;
        whole = whole && m->array().isFinite().all() && (m->array() == m->array().floor()).all();
        low = any ? std::min(low, m->minCoeff()) : m->minCoeff();
        high = any ? std::max(high, m->maxCoeff()) : m->maxCoeff();
        any = true;
    }
    if (any && whole) {
        spec.distribution = InitDistribution::Integers;
        spec.low = low;
        spec.high = high + 1;  // integers draws low .. high - 1
    }
    return spec;
}

Projections drawnProjections(const InitSpec& spec, int dModel, int dProj, int dOut) {
    InitSpec draw = spec;
    draw.dModel.reset();
    draw.dProj = dProj;
    draw.mode = ProjectionMode::Separate;
    draw.output = true;
    draw.bias = false;
    SplitMix64 rng(spec.seed);
    Projections p = drawProjections(rng, draw, dModel);
    if (dOut != dModel) {
        p.output = drawMatrix(rng, draw, dProj, dOut);
        p.outputBias = VectorD::Zero(dOut);
    }
    return p;
}

const std::vector<std::string>& streamTokens(const Scene& scene, Stream stream) {
    return isSourceStream(scene, stream) ? scene.sourceTokens : scene.tokens;
}

const MatrixD& streamEmbeddings(const Scene& scene, Stream stream) {
    return isSourceStream(scene, stream) ? scene.sourceEmbeddings : scene.embeddings;
}

void retokenize(Scene& scene, Stream stream, const std::vector<std::string>& tokens,
                const std::vector<int>& fromOld) {
    const bool source = isSourceStream(scene, stream);
    const bool keys = source || !scene.hasSource;  // this stream's tokens are the keys
    const bool queries = !source;
    MatrixD& embeddings = source ? scene.sourceEmbeddings : scene.embeddings;
    const int n = static_cast<int>(tokens.size());
    const int d = scene.dModel();

    MatrixD next(n, d);
    for (int i = 0; i < n; ++i) {
        next.row(i) = fromOld[i] >= 0 ? MatrixD(embeddings.row(fromOld[i]))
                                      : MatrixD(wordVector(tokens[i], d).transpose());
    }
    Mask& mask = scene.mask;
    if (keys && !mask.padding.empty()) {
        std::vector<bool> padding(n, false);
        for (int i = 0; i < n; ++i) {
            if (fromOld[i] >= 0) padding[i] = mask.padding[fromOld[i]];
        }
        mask.padding = std::move(padding);
    }
    if (mask.allowed) {
        const BoolMatrix& old = *mask.allowed;
        const Eigen::Index rows = queries ? n : old.rows();
        const Eigen::Index cols = keys ? n : old.cols();
        BoolMatrix allowed(rows, cols);
        for (Eigen::Index r = 0; r < rows; ++r) {
            for (Eigen::Index c = 0; c < cols; ++c) {
                const int oldRow = queries ? fromOld[r] : static_cast<int>(r);
                const int oldCol = keys ? fromOld[c] : static_cast<int>(c);
                allowed(r, c) = oldRow < 0 || oldCol < 0 || old(oldRow, oldCol);
            }
        }
        mask.allowed = std::move(allowed);
    }
    // Score terms follow their tokens; a new token's cells get none (0): the scene holds the
    // terms as numbers, with nothing to compute a new cell's from.
    for (std::vector<MatrixD>* terms :
         {&scene.scoreTerms.beforeScale, &scene.scoreTerms.afterScale}) {
        for (MatrixD& old : *terms) {
            const Eigen::Index rows = queries ? n : old.rows();
            const Eigen::Index cols = keys ? n : old.cols();
            MatrixD moved = MatrixD::Zero(rows, cols);
            for (Eigen::Index r = 0; r < rows; ++r) {
                for (Eigen::Index c = 0; c < cols; ++c) {
                    const int oldRow = queries ? fromOld[r] : static_cast<int>(r);
                    const int oldCol = keys ? fromOld[c] : static_cast<int>(c);
                    if (oldRow >= 0 && oldCol >= 0) moved(r, c) = old(oldRow, oldCol);
                }
            }
            old = std::move(moved);
        }
    }
    embeddings = std::move(next);
    (source ? scene.sourceTokens : scene.tokens) = tokens;
    ensureLearnedRows(scene);
    dropInitIfEmbeddingsDrawn(scene);
}

void insertToken(Scene& scene, Stream stream, int at, const std::string& text) {
    std::vector<std::string> tokens = streamTokens(scene, stream);
    std::vector<int> fromOld(tokens.size());
    std::iota(fromOld.begin(), fromOld.end(), 0);
    at = std::clamp(at, 0, static_cast<int>(tokens.size()));
    tokens.insert(tokens.begin() + at, text);
    fromOld.insert(fromOld.begin() + at, -1);
    retokenize(scene, stream, tokens, fromOld);
}

void removeToken(Scene& scene, Stream stream, int at) {
    std::vector<std::string> tokens = streamTokens(scene, stream);
    if (tokens.size() <= 1 || at < 0 || at >= static_cast<int>(tokens.size())) return;
    std::vector<int> fromOld(tokens.size());
    std::iota(fromOld.begin(), fromOld.end(), 0);
    tokens.erase(tokens.begin() + at);
    fromOld.erase(fromOld.begin() + at);
    retokenize(scene, stream, tokens, fromOld);
}

void moveToken(Scene& scene, Stream stream, int from, int to) {
    std::vector<std::string> tokens = streamTokens(scene, stream);
    const int n = static_cast<int>(tokens.size());
    if (from < 0 || from >= n || to < 0 || to >= n || from == to) return;
    std::vector<int> fromOld(n);
    std::iota(fromOld.begin(), fromOld.end(), 0);
    const std::string text = tokens[from];
    tokens.erase(tokens.begin() + from);
    tokens.insert(tokens.begin() + to, text);
    fromOld.erase(fromOld.begin() + from);
    fromOld.insert(fromOld.begin() + to, from);
    retokenize(scene, stream, tokens, fromOld);
}

void renameToken(Scene& scene, Stream stream, int at, const std::string& text) {
    std::vector<std::string>& tokens =
        isSourceStream(scene, stream) ? scene.sourceTokens : scene.tokens;
    if (at >= 0 && at < static_cast<int>(tokens.size())) tokens[at] = text;
}

void setSentence(Scene& scene, Stream stream, const std::vector<std::string>& words) {
    if (words.empty()) return;
    const std::vector<std::string>& old = streamTokens(scene, stream);
    // The same sentence again changes nothing (a saved file whose repeated words differ keeps
    // its vectors until a different sentence is typed).
    if (words == old) return;
    // One vector per word: every occurrence of a text takes its first old occurrence's row.
    std::map<std::string, int> firstOccurrence;
    for (int i = 0; i < static_cast<int>(old.size()); ++i)
        firstOccurrence.emplace(old[i], i);
    std::vector<int> fromOld;
    for (const std::string& word : words) {
        const auto found = firstOccurrence.find(word);
        fromOld.push_back(found != firstOccurrence.end() ? found->second : -1);
    }
    retokenize(scene, stream, words, fromOld);
}

void setPadding(Scene& scene, int key, bool padded) {
    const int keys = scene.keyCount();
    if (key < 0 || key >= keys) return;
    if (static_cast<int>(scene.mask.padding.size()) != keys) scene.mask.padding.assign(keys, false);
    scene.mask.padding[key] = padded;
}

void setSourceEnabled(Scene& scene, bool enabled) {
    if (enabled == scene.hasSource) return;
    scene.hasSource = enabled;
    if (enabled) {
        scene.sourceTokens = scene.tokens;
        scene.sourceEmbeddings = scene.embeddings;
    } else {
        scene.sourceTokens.clear();
        scene.sourceEmbeddings.resize(0, 0);
    }
    const int lq = scene.queryCount(), lk = scene.keyCount();
    Mask& mask = scene.mask;
    if (!mask.padding.empty()) mask.padding.resize(lk, false);
    if (mask.allowed && mask.allowed->cols() != lk) {
        BoolMatrix allowed = BoolMatrix::Constant(lq, lk, true);
        const Eigen::Index c = std::min<Eigen::Index>(lk, mask.allowed->cols());
        allowed.leftCols(c) = mask.allowed->leftCols(c);
        mask.allowed = std::move(allowed);
    }
    for (std::vector<MatrixD>* terms :
         {&scene.scoreTerms.beforeScale, &scene.scoreTerms.afterScale}) {
        for (MatrixD& m : *terms)
            m = resized(m, lq, lk, MatrixD::Zero(lq, lk));
    }
    ensureLearnedRows(scene);
    // A drawn source is drawn between the embeddings and the projections: with it gone or new,
    // the init would no longer reproduce either.
    dropInitIfEmbeddingsDrawn(scene);
}

void randomizeEmbeddings(Scene& scene, std::uint64_t seed) {
    SplitMix64 rng(seed);
    const InitSpec spec;  // normal, std 1
    scene.embeddings = drawMatrix(rng, spec, scene.queryCount(), scene.dModel());
    if (scene.hasSource) {
        scene.sourceEmbeddings =
            drawMatrix(rng, spec, static_cast<int>(scene.sourceEmbeddings.rows()), scene.dModel());
    }
    dropInitIfEmbeddingsDrawn(scene);
}

void setModelWidth(Scene& scene, int dModel, const InitSpec& spec) {
    const int d = dModel;
    if (d < 1 || d == scene.dModel()) return;
    Projections& p = scene.projections;
    const bool identity = p.mode == ProjectionMode::Identity;
    const int dProj = identity ? d : scene.dProj();
    const int dOut = scene.dOut();
    const Projections fresh = drawnProjections(spec, d, dProj, p.hasOutput ? dOut : d);

    auto widen = [d](MatrixD& m) {
        m = resized(m, static_cast<int>(m.rows()), d, MatrixD::Zero(m.rows(), d));
    };
    widen(scene.embeddings);
    if (scene.hasSource) widen(scene.sourceEmbeddings);
    Positional& pos = scene.positional;
    if (pos.table.size() > 0) {
        const int rows = static_cast<int>(pos.table.rows());
        pos.table = resized(pos.table, rows, d, learnedPositionRows(0, rows, d));
    }
    LayerNorm& norm = scene.norm;
    if (norm.enabled || norm.weight.size() > 0) norm.weight = resized(norm.weight, d, 1.0);
    if (norm.enabled || norm.bias.size() > 0) norm.bias = resized(norm.bias, d, 0.0);

    if (identity) {
        p.queryBias = p.keyBias = p.valueBias = VectorD::Zero(d);
        if (p.hasOutput) p.output = resized(p.output, d, dOut, fresh.output);
        scene.heads = largestDivisorAtMost(d, scene.heads);
    } else {
        // K and V keep their width, which is narrower than d_proj with grouped kv heads.
        const int dKV = scene.dKeyValue();
        p.query = resized(p.query, d, dProj, fresh.query);
        if (p.mode == ProjectionMode::Separate) p.key = resized(p.key, d, dKV, fresh.key);
        p.value = resized(p.value, d, dKV, fresh.value);
    }
    settleHeadFeatures(scene);
    scene.init.reset();
}

void setProjectionWidth(Scene& scene, int dProj, const InitSpec& spec) {
    Projections& p = scene.projections;
    if (dProj < 1 || p.mode == ProjectionMode::Identity || dProj == scene.dProj()) return;
    ungroupKeyValueHeads(scene);
    const int d = scene.dModel();
    const int dOut = scene.dOut();
    const Projections fresh = drawnProjections(spec, d, dProj, p.hasOutput ? dOut : d);
    const bool separate = p.mode == ProjectionMode::Separate;
    p.query = resized(p.query, d, dProj, fresh.query);
    if (separate) p.key = resized(p.key, d, dProj, fresh.key);
    p.value = resized(p.value, d, dProj, fresh.value);
    p.queryBias = resized(p.queryBias, dProj, 0.0);
    p.keyBias = separate ? resized(p.keyBias, dProj, 0.0) : p.queryBias;
    p.valueBias = resized(p.valueBias, dProj, 0.0);
    if (p.hasOutput) p.output = resized(p.output, dProj, dOut, fresh.output);
    scene.heads = largestDivisorAtMost(dProj, scene.heads);
    settleHeadFeatures(scene);
    scene.init.reset();
}

void setProjectionMode(Scene& scene, ProjectionMode mode, const InitSpec& spec) {
    Projections& p = scene.projections;
    if (mode == p.mode) return;
    ungroupKeyValueHeads(scene);  // only separate K and V can be grouped
    const int d = scene.dModel();
    if (mode == ProjectionMode::Identity) {
        const int dOut = scene.dOut();
        if (p.hasOutput && p.output.rows() != d) {
            p.output = resized(p.output, d, dOut, drawnProjections(spec, d, d, dOut).output);
        }
        p.query = p.key = p.value = MatrixD();
        p.queryBias = p.keyBias = p.valueBias = VectorD::Zero(d);
        scene.heads = largestDivisorAtMost(d, scene.heads);
    } else if (p.mode == ProjectionMode::Identity) {
        // X·I = X: the layer computes the same numbers until a weight is edited or re-rolled.
        p.query = p.value = MatrixD::Identity(d, d);
        p.key = mode == ProjectionMode::Separate ? MatrixD::Identity(d, d) : MatrixD();
        p.queryBias = p.keyBias = p.valueBias = VectorD::Zero(d);
    } else if (mode == ProjectionMode::SharedQK) {
        p.key = MatrixD();
        p.keyBias = p.queryBias;
    } else {
        p.key = p.query;
        p.keyBias = p.queryBias;
    }
    p.mode = mode;
    settleHeadFeatures(scene);
    scene.init.reset();
}

void setOutputProjection(Scene& scene, bool enabled, const InitSpec& spec) {
    Projections& p = scene.projections;
    if (enabled == p.hasOutput) return;
    p.hasOutput = enabled;
    if (enabled) {
        const int d = scene.dModel();
        p.output = drawnProjections(spec, d, scene.dProj(), d).output;
        p.outputBias = VectorD::Zero(d);
    } else {
        p.output = MatrixD();
        p.outputBias = VectorD();
    }
    scene.init.reset();
}

void rerollProjections(Scene& scene, InitSpec spec, bool bias) {
    ungroupKeyValueHeads(scene);  // the draws are d_model x d_proj
    const Projections& old = scene.projections;
    const int d = scene.dModel();
    const int dProj = scene.dProj();
    const int dOut = scene.dOut();
    const bool identity = old.mode == ProjectionMode::Identity;
    spec.dModel.reset();
    spec.dProj = dProj;
    spec.mode = identity ? ProjectionMode::Separate : old.mode;
    spec.output = old.hasOutput;
    spec.bias = bias;
    SplitMix64 rng(spec.seed);
    Projections fresh = drawProjections(rng, spec, d);
    const bool otherOutputWidth = old.hasOutput && dOut != d;
    if (otherOutputWidth) {
        fresh.output = drawMatrix(rng, spec, dProj, dOut);
        fresh.outputBias =
            bias ? VectorD(drawMatrix(rng, spec, 1, dOut).row(0).transpose()) : VectorD::Zero(dOut);
    }
    if (identity) {
        Projections kept = old;
        kept.output = fresh.output;
        kept.outputBias = fresh.outputBias;
        fresh = std::move(kept);
    }
    scene.projections = std::move(fresh);
    // init cannot express identity mode or a W_O narrower or wider than d_model.
    if (identity || otherOutputWidth) {
        scene.init.reset();
    } else {
        scene.init = spec;
    }
}

void setPositionalKind(Scene& scene, PositionalKind kind) {
    scene.positional.kind = kind;
    ensureLearnedRows(scene);
}

void setNormEnabled(Scene& scene, bool enabled) {
    LayerNorm& norm = scene.norm;
    norm.enabled = enabled;
    const int d = scene.dModel();
    if (norm.weight.size() != d) norm.weight = resized(norm.weight, d, 1.0);
    if (norm.bias.size() != d) norm.bias = resized(norm.bias, d, 0.0);
    if (!(norm.eps > 0)) norm.eps = 1e-5;
}

}  // namespace ae
