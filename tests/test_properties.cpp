// Properties of the engine that hold for any scene: softmax rows, masking, permutation
// equivariance, agreement with a naive hand computation, the cache (which stages a change redoes),
// the init generator and the memory check.
// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's AVX-512 product kernels that this
// file's own matrix products instantiate (avx512fintrin.h, not this code).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <QTest>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "attention_engine.h"
#include "init_draw.h"
#include "scene_file.h"
#include "support/result_check.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;

Q_DECLARE_METATYPE(ae::ProjectionMode)

namespace {

constexpr double kExact = 1e-12;  // double against double: only rounding-order differences

Scene golden(const QString& name) {
    return ae::io::loadSceneFile(aetest::dataPath(name + ".scene.json"));
}

template <typename A, typename B>
bool bitIdentical(const A& a, const B& b) {
    using Scalar = typename A::Scalar;
    static_assert(std::is_same_v<Scalar, typename B::Scalar>);
    return a.rows() == b.rows() && a.cols() == b.cols() &&
           (a.size() == 0 ||
            std::memcmp(a.data(), b.data(), static_cast<size_t>(a.size()) * sizeof(Scalar)) == 0);
}

template <typename Scalar>
aetest::Comparison compareEngines(const AttentionEngine<Scalar>& got,
                                  const AttentionEngine<Scalar>& expected) {
    return aetest::compareResults(aetest::resultFromEngine(got),
                                  aetest::resultFromEngine(expected));
}

// A fixed stream of numbers in [-1, 1) for scenes built here (independent of the engine's init).
class Numbers {
public:
    explicit Numbers(std::uint32_t seed) : state_(seed) {}
    double next() {
        state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
        return static_cast<double>(state_ >> 11) * 0x1.0p-52 - 1.0;
    }
    MatrixD matrix(int rows, int cols) {
        MatrixD m(rows, cols);
        for (Eigen::Index i = 0; i < m.size(); ++i)
            m.data()[i] = next();
        return m;
    }
    ae::VectorD vector(int n) { return matrix(n, 1).col(0); }

private:
    std::uint64_t state_;
};

enum class Inputs { Plain, Norm, Sinusoidal, Learned, NormAndSinusoidal };

// A small valid scene: 5 query tokens, 4 source tokens when `cross`, d_model 6, d_proj 4 (6 in
// identity mode), 2 heads, biases and an output projection where the mode has them.
Scene builtScene(ae::ProjectionMode mode, bool cross, Inputs inputs) {
    Numbers n(7 + static_cast<int>(mode) * 10 + cross * 100 + static_cast<int>(inputs) * 1000);
    Scene s;
    const int lq = 5, lk = cross ? 4 : 5, d = 6;
    const int dp = mode == ae::ProjectionMode::Identity ? d : 4;
    s.tokens = {"a", "b", "c", "d", "e"};
    s.embeddings = n.matrix(lq, d) * 2.0;
    if (cross) {
        s.hasSource = true;
        s.sourceTokens = {"w", "x", "y", "z"};
        s.sourceEmbeddings = n.matrix(lk, d) * 2.0;
        s.mask.padding = {false, false, true, false};
    } else {
        s.mask.causal = true;
    }
    if (inputs == Inputs::Sinusoidal || inputs == Inputs::NormAndSinusoidal) {
        s.positional.kind = ae::PositionalKind::Sinusoidal;
    } else if (inputs == Inputs::Learned) {
        s.positional.kind = ae::PositionalKind::Learned;
        s.positional.table = n.matrix(6, d);
    }
    if (inputs == Inputs::Norm || inputs == Inputs::NormAndSinusoidal) {
        s.norm.enabled = true;
        s.norm.weight = n.vector(d).array() + 1.5;
        s.norm.bias = n.vector(d);
    }
    ae::Projections& p = s.projections;
    p.mode = mode;
    if (mode != ae::ProjectionMode::Identity) {
        p.query = n.matrix(d, dp);
        if (mode == ae::ProjectionMode::Separate) p.key = n.matrix(d, dp);
        p.value = n.matrix(d, dp);
        p.queryBias = n.vector(dp);
        p.keyBias = mode == ae::ProjectionMode::Separate ? n.vector(dp) : p.queryBias;
        p.valueBias = n.vector(dp);
    } else {
        p.queryBias = p.keyBias = p.valueBias = ae::VectorD::Zero(dp);
    }
    p.hasOutput = true;
    p.output = n.matrix(dp, 3);
    p.outputBias = n.vector(3);
    s.heads = 2;
    return s;
}

// ---------------------------------------------------------------- naive attention, one head
using Table = std::vector<std::vector<double>>;

Table table(const MatrixD& m) {
    Table t(static_cast<size_t>(m.rows()), std::vector<double>(static_cast<size_t>(m.cols())));
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        for (Eigen::Index j = 0; j < m.cols(); ++j)
            t[i][j] = m(i, j);
    }
    return t;
}

MatrixD matrixOf(const Table& t) {
    MatrixD m(static_cast<Eigen::Index>(t.size()), static_cast<Eigen::Index>(t[0].size()));
    for (size_t i = 0; i < t.size(); ++i) {
        for (size_t j = 0; j < t[0].size(); ++j)
            m(i, j) = t[i][j];
    }
    return m;
}

// x·w + b with loops; an empty w is the identity.
Table project(const Table& x, const MatrixD& w, const ae::VectorD& b) {
    if (w.size() == 0) return x;
    Table out(x.size(), std::vector<double>(static_cast<size_t>(w.cols()), 0.0));
    for (size_t i = 0; i < x.size(); ++i) {
        for (Eigen::Index c = 0; c < w.cols(); ++c) {
            double sum = 0;
            for (size_t k = 0; k < x[i].size(); ++k)
                sum += x[i][k] * w(static_cast<Eigen::Index>(k), c);
            out[i][c] = sum + (b.size() ? b(c) : 0.0);
        }
    }
    return out;
}

struct Naive {
    Table scores, weights, context, output;
};

// Single-head attention written out from the definitions, for scenes without positions or norm.
Naive naiveAttention(const Scene& s) {
    const ae::Projections& p = s.projections;
    const Table xq = table(s.embeddings);
    const Table xk = s.hasSource ? table(s.sourceEmbeddings) : xq;
    const bool identity = p.mode == ae::ProjectionMode::Identity;
    const bool shared = p.mode == ae::ProjectionMode::SharedQK;
    const Table q = project(xq, identity ? MatrixD() : p.query, p.queryBias);
    const Table k = project(xk, identity ? MatrixD() : (shared ? p.query : p.key),
                            shared ? p.queryBias : p.keyBias);
    const Table v = project(xk, identity ? MatrixD() : p.value, p.valueBias);
    const size_t lq = q.size(), lk = k.size(), dk = q[0].size();
    double divisor = 1.0;
    switch (s.scale.kind) {
        case ae::ScaleKind::SqrtDk:
            divisor = std::sqrt(static_cast<double>(dk));
            break;
        case ae::ScaleKind::SqrtDmodel:
            divisor = std::sqrt(static_cast<double>(xq[0].size()));
            break;
        case ae::ScaleKind::None:
            divisor = 1.0;
            break;
        case ae::ScaleKind::Divisor:
            divisor = s.scale.divisor;
            break;
    }
    Naive r;
    r.scores.assign(lq, std::vector<double>(lk));
    r.weights.assign(lq, std::vector<double>(lk));
    r.context.assign(lq, std::vector<double>(v[0].size(), 0.0));
    for (size_t i = 0; i < lq; ++i) {
        std::vector<double> row(lk);
        bool anyVisible = false;
        for (size_t j = 0; j < lk; ++j) {
            double dot = 0;
            for (size_t c = 0; c < dk; ++c)
                dot += q[i][c] * k[j][c];
            r.scores[i][j] = dot;
            bool visible = !(s.mask.causal && j > i);
            if (s.mask.window &&
                std::abs(static_cast<long>(i) - static_cast<long>(j)) > *s.mask.window)
                visible = false;
            if (!s.mask.padding.empty() && s.mask.padding[j]) visible = false;
            if (s.mask.allowed && !(*s.mask.allowed)(i, j)) visible = false;
            anyVisible = anyVisible || visible;
            row[j] = visible ? dot / divisor : s.maskFill;
        }
        if (!anyVisible && std::isinf(s.maskFill)) continue;  // no key: no attention
        const double top = *std::max_element(row.begin(), row.end());
        double total = 0;
        for (size_t j = 0; j < lk; ++j)
            total += r.weights[i][j] = std::exp(row[j] - top);
        for (size_t j = 0; j < lk; ++j)
            r.weights[i][j] /= total;
        for (size_t j = 0; j < lk; ++j) {
            for (size_t c = 0; c < v[0].size(); ++c)
                r.context[i][c] += r.weights[i][j] * v[j][c];
        }
    }
    if (p.hasOutput) r.output = project(r.context, p.output, p.outputBias);
    return r;
}

// ---------------------------------------------------------------- SplitMix64, written out here
std::uint64_t splitMix64(std::uint64_t& state) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

MatrixD sinusoidal(int rows, int d, double base) {
    MatrixD pe(rows, d);
    for (int pos = 0; pos < rows; ++pos) {
        for (int i = 0; 2 * i < d; ++i) {
            const double angle = pos / std::pow(base, 2.0 * i / d);
            pe(pos, 2 * i) = std::sin(angle);
            if (2 * i + 1 < d) pe(pos, 2 * i + 1) = std::cos(angle);
        }
    }
    return pe;
}

MatrixD expectedHeads(const QJsonObject& expected, const char* stage) {
    const QJsonArray heads = expected["heads"].toArray();
    std::vector<MatrixD> parts;
    Eigen::Index cols = 0;
    for (const QJsonValue& h : heads) {
        parts.push_back(aetest::jsonMatrix(h.toObject()[QLatin1String(stage)], stage));
        cols += parts.back().cols();
    }
    MatrixD all(parts[0].rows(), cols);
    Eigen::Index at = 0;
    for (const MatrixD& m : parts) {
        all.middleCols(at, m.cols()) = m;
        at += m.cols();
    }
    return all;
}

QString worstOf(const QString& name, const MatrixD& got, const MatrixD& expected, double tolerance,
                bool* ok) {
    aetest::Comparison c;
    c.matrix(name, got, expected);
    *ok = c.within(tolerance);
    return c.report(tolerance);
}

}  // namespace

class TestProperties : public QObject {
    Q_OBJECT

private slots:
    // ------------------------------------------------------------ softmax rows and masks
    void rowsSumToOne_data() { maskedScenes(false); }
    void rowsSumToOne() {
        QFETCH(QString, name);
        QFETCH(bool, useFloat);
        if (useFloat) {
            checkRowSums<float>(golden(name), 1e-5);
        } else {
            checkRowSums<double>(golden(name), 1e-13);
        }
    }

    void maskedWeightsAreExactlyZero_data() { maskedScenes(true); }
    void maskedWeightsAreExactlyZero() {
        QFETCH(QString, name);
        QFETCH(bool, useFloat);
        Scene scene = golden(name);
        QVERIFY(std::isinf(scene.maskFill));
        if (useFloat) {
            checkMaskedZero<float>(scene);
        } else {
            checkMaskedZero<double>(scene);
        }
    }

    // Masked keys with the largest scores: exp(-inf) must give 0, not exp's underflow floor.
    void maskedZeroWithLargeHiddenScores() {
        Scene s = builtScene(ae::ProjectionMode::Identity, false, Inputs::Plain);
        s.mask = {};
        s.mask.padding = {true, false, true, false, true};
        s.embeddings.col(0) << 9, 0.1, 8, 0.2, 7;
        checkMaskedZero<float>(s);
        checkMaskedZero<double>(s);
        // Rows long enough for Eigen's packet (vectorised) exp, which for float returns ~1e-39
        // rather than 0 for -inf: 64 keys, every third one hidden, and a causal mask.
        Scene wide;
        const int n = 64;
        wide.tokens.assign(n, "t");
        wide.embeddings = MatrixD(n, 2);
        for (int i = 0; i < n; ++i)
            wide.embeddings.row(i) << (i % 3 == 0 ? 4.0 : 0.5), 0.01 * i;
        wide.projections.mode = ae::ProjectionMode::Identity;
        wide.mask.causal = true;
        for (int i = 0; i < n; ++i)
            wide.mask.padding.push_back(i % 3 == 0 && i > 0);
        checkMaskedZero<float>(wide);
        checkMaskedZero<double>(wide);
        checkRowSums<float>(wide, 1e-5);
        checkRowSums<double>(wide, 1e-13);
        // The check can fail: with a finite fill the masked weights are small but not zero.
        s.maskFill = -30;
        AttentionEngine<float> engine(s);
        engine.compute();
        QVERIFY(engine.weights(0)(1, 0) > 0.0f);
    }

    void fullyMaskedRow_data() {
        QTest::addColumn<bool>("useFloat");
        QTest::newRow("double") << false;
        QTest::newRow("float") << true;
    }
    void fullyMaskedRow() {
        QFETCH(bool, useFloat);
        if (useFloat) {
            checkFullyMasked<float>(1e-7);
        } else {
            checkFullyMasked<double>(1e-15);
        }
    }

    // ------------------------------------------------------------ permutation equivariance
    void permutationEquivariance_data() {
        QTest::addColumn<Scene>("scene");
        for (const char* name :
             {"four-words", "journey", "bert-style", "shared-qk", "identity", "init-integers"}) {
            QTest::newRow(name) << golden(name);
        }
        Scene gpt = golden("gpt2-style");  // layer norm and an output projection
        gpt.positional = {};
        gpt.mask = {};
        QTest::newRow("gpt2-style without positions or mask") << gpt;
        Scene cross = golden("cross");
        cross.mask = {};
        QTest::newRow("cross without mask") << cross;
    }
    void permutationEquivariance() {
        QFETCH(Scene, scene);
        QCOMPARE(scene.positional.kind, ae::PositionalKind::None);
        QVERIFY(!scene.mask.causal && !scene.mask.window && !scene.mask.allowed);
        const int lq = scene.queryCount(), lk = scene.keyCount();
        std::mt19937 random(20260101u + static_cast<unsigned>(lq * 31 + lk));
        std::vector<int> perm(lq), sourcePerm(lk);
        do {
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), random);
        } while (lq > 1 && std::is_sorted(perm.begin(), perm.end()));
        std::iota(sourcePerm.begin(), sourcePerm.end(), 0);
        if (scene.hasSource) std::shuffle(sourcePerm.begin(), sourcePerm.end(), random);
        const std::vector<int>& keyPerm = scene.hasSource ? sourcePerm : perm;

        Scene permuted = scene;
        for (int i = 0; i < lq; ++i)
            permuted.embeddings.row(i) = scene.embeddings.row(perm[i]);
        for (int j = 0; j < lk; ++j) {
            if (scene.hasSource)
                permuted.sourceEmbeddings.row(j) = scene.sourceEmbeddings.row(sourcePerm[j]);
            if (!scene.mask.padding.empty())
                permuted.mask.padding[j] = scene.mask.padding[keyPerm[j]];
        }
        AttentionEngine<double> a(scene), b(permuted);
        a.compute();
        b.compute();

        aetest::Comparison c;
        const auto rows = [&](const MatrixD& m) {
            MatrixD out(m.rows(), m.cols());
            for (int i = 0; i < m.rows(); ++i)
                out.row(i) = m.row(perm[i]);
            return out;
        };
        const auto cells = [&](const MatrixD& m) {
            MatrixD out(m.rows(), m.cols());
            for (int i = 0; i < m.rows(); ++i) {
                for (int j = 0; j < m.cols(); ++j)
                    out(i, j) = m(perm[i], keyPerm[j]);
            }
            return out;
        };
        c.matrix("x", b.x(), rows(a.x()));
        c.matrix("q", b.query(), rows(a.query()));
        for (int h = 0; h < a.heads(); ++h) {
            const QString head = QStringLiteral("heads[%1].").arg(h);
            c.matrix(head + "scores", b.scores(h), cells(a.scores(h)));
            c.matrix(head + "weights", b.weights(h), cells(a.weights(h)));
            c.matrix(head + "context", b.context(h), rows(a.context(h)));
        }
        c.matrix("concat", b.concat(), rows(a.concat()));
        if (a.hasOutput()) c.matrix("output", b.output(), rows(a.output()));
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
    }

    // ------------------------------------------------------------ naive single head
    void naiveSingleHead_data() {
        QTest::addColumn<Scene>("scene");
        for (const char* name : {"journey", "four-words", "journey-causal", "shared-qk", "identity",
                                 "cross", "blind-row", "blind-row-finite", "tutorial-variant",
                                 "window", "bert-style", "huge-scores", "init-integers"}) {
            Scene s = golden(name);
            s.heads = 1;
            QTest::newRow(name) << s;
        }
        Scene divided = golden("journey");
        divided.scale = {ae::ScaleKind::Divisor, 0.37};
        QTest::newRow("journey, divisor 0.37") << divided;
        Scene byModel = golden("cross");
        byModel.heads = 1;
        byModel.scale = {ae::ScaleKind::SqrtDmodel, 1.0};
        QTest::newRow("cross, sqrt_dmodel") << byModel;
    }
    void naiveSingleHead() {
        QFETCH(Scene, scene);
        QCOMPARE(scene.positional.kind, ae::PositionalKind::None);
        QVERIFY(!scene.norm.enabled);
        const Naive naive = naiveAttention(scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        aetest::Comparison c;
        c.matrix("scores", engine.scores(0), matrixOf(naive.scores));
        c.matrix("weights", engine.weights(0), matrixOf(naive.weights));
        c.matrix("context", engine.context(0), matrixOf(naive.context));
        if (scene.projections.hasOutput)
            c.matrix("output", engine.output(), matrixOf(naive.output));
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
    }

    // ------------------------------------------------------------ the cache
    void parameterChangesKeepProjections_data() {
        QTest::addColumn<Scene>("scene");
        QTest::newRow("tutorial-variant") << golden("tutorial-variant");
        QTest::newRow("cross") << golden("cross");
        QTest::newRow("shared-qk") << golden("shared-qk");
        QTest::newRow("built identity, norm")
            << builtScene(ae::ProjectionMode::Identity, false, Inputs::Norm);
    }
    void parameterChangesKeepProjections() {
        QFETCH(Scene, scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        using M = AttentionEngine<double>::Matrix;
        const M q = engine.query(), k = engine.key(), v = engine.value(), x = engine.x();
        const ae::EngineCounters before = engine.counters();
        Scene edited = scene;
        const auto checkUnchanged = [&](const char* what) {
            QVERIFY2(bitIdentical(engine.query(), q), what);
            QVERIFY2(bitIdentical(engine.key(), k), what);
            QVERIFY2(bitIdentical(engine.value(), v), what);
            QVERIFY2(bitIdentical(engine.x(), x), what);
            QVERIFY2(engine.counters().fullProjections == before.fullProjections, what);
            QVERIFY2(engine.counters().fullPreparations == before.fullPreparations, what);
            QCOMPARE(engine.counters().rowUpdates, before.rowUpdates);
            AttentionEngine<double> fresh(edited);
            fresh.compute();
            const aetest::Comparison c = compareEngines(engine, fresh);
            QVERIFY2(c.within(kExact), qPrintable(QString(what) + ": " + c.report(kExact)));
        };

        edited.scale = {ae::ScaleKind::Divisor, 2.5};
        engine.setScale(edited.scale);
        long scorePasses = engine.counters().scorePasses;
        engine.compute();
        QCOMPARE(engine.divisor(), 2.5);
        QCOMPARE(engine.counters().scorePasses, scorePasses);
        checkUnchanged("setScale");

        edited.mask = {};
        edited.mask.window = 1;
        engine.setMask(edited.mask);
        const long scalePasses = engine.counters().scalePasses;
        engine.compute();
        QCOMPARE(engine.counters().scalePasses, scalePasses);
        QVERIFY(!engine.allowed().all());
        checkUnchanged("setMask");

        edited.maskFill = -7.5;
        engine.setMaskFill(edited.maskFill);
        const long softmaxPasses = engine.counters().softmaxPasses;
        engine.compute();
        QCOMPARE(engine.counters().softmaxPasses, softmaxPasses + 1);
        checkUnchanged("setMaskFill");

        // Every divisor of the projection width: only a re-slice of the same Q, K and V.
        const int dp = scene.dProj();
        for (int heads = 1; heads <= dp; ++heads) {
            if (dp % heads != 0 || heads == engine.heads()) continue;
            edited.heads = heads;
            engine.setHeads(heads);
            scorePasses = engine.counters().scorePasses;
            engine.compute();
            QCOMPARE(engine.counters().scorePasses, scorePasses + 1);
            QCOMPARE(engine.heads(), heads);
            for (int h = 0; h < heads; ++h) {
                QVERIFY(bitIdentical(M(engine.headQuery(h)),
                                     M(q.middleCols(h * dp / heads, dp / heads))));
            }
            checkUnchanged("setHeads");
        }
        // A head count that does not divide is refused and changes nothing.
        const int bad = dp + 1;
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, engine.setHeads(bad));
        QCOMPARE(engine.heads(), edited.heads);
        engine.compute();
        checkUnchanged("refused setHeads");
    }

    void embeddingEdit_data() {
        QTest::addColumn<Scene>("scene");
        const std::pair<ae::ProjectionMode, const char*> modes[] = {
            {ae::ProjectionMode::Separate, "separate"},
            {ae::ProjectionMode::SharedQK, "shared_qk"},
            {ae::ProjectionMode::Identity, "identity"}};
        const std::pair<Inputs, const char*> inputs[] = {
            {Inputs::Plain, "plain"},
            {Inputs::Norm, "layer norm"},
            {Inputs::Sinusoidal, "sinusoidal"},
            {Inputs::Learned, "learned positions"},
            {Inputs::NormAndSinusoidal, "norm+sinusoidal"}};
        for (const auto& [mode, modeName] : modes) {
            for (bool cross : {false, true}) {
                for (const auto& [in, inName] : inputs) {
                    QTest::addRow("%s, %s, %s", modeName, cross ? "cross" : "self", inName)
                        << builtScene(mode, cross, in);
                }
            }
        }
        Scene gpt = golden("gpt2-style");
        QTest::newRow("gpt2-style") << gpt;
    }
    void embeddingEdit() {
        QFETCH(Scene, scene);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const ae::EngineCounters before = engine.counters();
        Scene edited = scene;
        // Two values of one query row and one of another.
        const std::tuple<int, int, double> queryEdits[] = {
            {2, 3, 1.75}, {2, 0, -0.25}, {4, 1, 3.0}};
        for (const auto& [row, col, value] : queryEdits) {
            engine.setEmbeddingValue(ae::Stream::Query, row, col, value);
            edited.embeddings(row, col) = value;
        }
        if (scene.hasSource) {
            engine.setEmbeddingValue(ae::Stream::Source, 1, 0, -0.5);
            edited.sourceEmbeddings(1, 0) = -0.5;
        }
        engine.compute();
        QCOMPARE(engine.counters().rowUpdates, before.rowUpdates + 1);
        QCOMPARE(engine.counters().fullProjections, before.fullProjections);
        QCOMPARE(engine.counters().fullPreparations, before.fullPreparations);
        QCOMPARE(engine.counters().scorePasses, before.scorePasses);  // rows and columns only
        AttentionEngine<double> fresh(edited);
        fresh.compute();
        const aetest::Comparison c = compareEngines(engine, fresh);
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
        // The edit did change something, so the comparison was not vacuous.
        AttentionEngine<double> original(scene);
        original.compute();
        QVERIFY(!compareEngines(engine, original).within(1e-6));
    }

    // An edit queued behind a change that redoes the scores anyway, and one before any compute.
    void embeddingEditWithOtherChanges() {
        const Scene scene =
            builtScene(ae::ProjectionMode::Separate, true, Inputs::NormAndSinusoidal);
        Scene edited = scene;
        edited.heads = 4;
        edited.embeddings(0, 0) = 2.0;
        edited.sourceEmbeddings(3, 5) = -2.0;
        AttentionEngine<double> engine(scene);
        engine.compute();
        engine.setHeads(4);
        engine.setEmbeddingValue(ae::Stream::Query, 0, 0, 2.0);
        engine.setEmbeddingValue(ae::Stream::Source, 3, 5, -2.0);
        engine.compute();
        AttentionEngine<double> fresh(edited);
        fresh.compute();
        aetest::Comparison c = compareEngines(engine, fresh);
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));

        AttentionEngine<double> early(scene);
        early.setHeads(4);
        early.setEmbeddingValue(ae::Stream::Query, 0, 0, 2.0);
        early.setEmbeddingValue(ae::Stream::Source, 3, 5, -2.0);
        early.compute();
        c = compareEngines(early, fresh);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
    }

    // An overflow leaves the stages before the scaling valid, and a later change recovers.
    void overflowThenRecover() {
        Scene s = builtScene(ae::ProjectionMode::Identity, false, Inputs::Plain);
        s.embeddings(1, 2) = 1e150;  // scores of 1e300: finite until divided by 1e-10
        s.embeddings(3, 2) = 1e150;
        s.scale = {ae::ScaleKind::Divisor, 1e-10};
        AttentionEngine<double> engine(s);
        try {
            engine.compute();
            QFAIL("no overflow");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("scores: overflow (values too large to represent)"));
        }
        QCOMPARE(engine.query()(1, 2), 1e150);
        QCOMPARE(engine.scores(0)(1, 3), 1e300);
        // A divisor that keeps the scores in range.
        s.scale = {ae::ScaleKind::Divisor, 2.0};
        engine.setScale(s.scale);
        engine.compute();
        AttentionEngine<double> fresh(s);
        fresh.compute();
        aetest::Comparison c = compareEngines(engine, fresh);
        QVERIFY2(c.within(0.0), qPrintable(c.report(0.0)));
        // And an edit of the offending value after another overflow.
        s.scale = {ae::ScaleKind::Divisor, 1e-10};
        engine.setScale(s.scale);
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, engine.compute());
        s.embeddings(1, 2) = 0.5;
        s.embeddings(3, 2) = -0.5;
        engine.setEmbeddingValue(ae::Stream::Query, 1, 2, 0.5);
        engine.setEmbeddingValue(ae::Stream::Query, 3, 2, -0.5);
        engine.compute();
        AttentionEngine<double> edited(s);
        edited.compute();
        c = compareEngines(engine, edited);
        QVERIFY2(c.within(kExact), qPrintable(c.report(kExact)));
    }

    // Sinusoidal positions for an odd width, and a base other than 10000, against this file's
    // own formula.
    void sinusoidalOddWidth() {
        Scene s = builtScene(ae::ProjectionMode::Identity, false, Inputs::Sinusoidal);
        s.embeddings = Numbers(99).matrix(5, 5);
        s.projections.queryBias = s.projections.keyBias = s.projections.valueBias =
            ae::VectorD::Zero(5);
        s.projections.output = Numbers(98).matrix(5, 3);
        s.heads = 1;
        s.positional.base = 37.5;
        AttentionEngine<double> engine(s);
        engine.compute();
        bool ok = true;
        const QString report =
            worstOf("x", engine.x(), s.embeddings + sinusoidal(5, 5, 37.5), kExact, &ok);
        QVERIFY2(ok, qPrintable(report));
    }

    // ------------------------------------------------------------ init
    void initReproducesGolden_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : aetest::goldenNames()) {
            if (name.startsWith("init-")) QTest::newRow(qPrintable(name)) << name;
        }
    }
    void initReproducesGolden() {
        QFETCH(QString, name);
        const Scene s = golden(name);
        QVERIFY(s.init.has_value());
        QVERIFY(!s.norm.enabled);
        const QJsonObject expected =
            aetest::readJson(aetest::dataPath(name + ".expected.json")).object();
        const auto prepared = [&](const MatrixD& e) {
            if (s.positional.kind == ae::PositionalKind::None) return e;
            if (s.positional.kind != ae::PositionalKind::Sinusoidal) return MatrixD();
            return MatrixD(e + sinusoidal(static_cast<int>(e.rows()), static_cast<int>(e.cols()),
                                          s.positional.base));
        };
        const ae::Projections& p = s.projections;
        const MatrixD x = prepared(s.embeddings);
        const MatrixD xs = s.hasSource ? prepared(s.sourceEmbeddings) : x;
        const bool shared = p.mode == ae::ProjectionMode::SharedQK;
        const MatrixD q = (x * p.query).rowwise() + p.queryBias.transpose();
        const MatrixD k = (xs * (shared ? p.query : p.key)).rowwise() +
                          (shared ? p.queryBias : p.keyBias).transpose();
        const MatrixD v = (xs * p.value).rowwise() + p.valueBias.transpose();
        // Integers are drawn exactly; normal and uniform through libm (log, cos) like the
        // reference.
        const bool integers = s.init->distribution == ae::InitDistribution::Integers;
        const double tolerance = integers ? 0.0 : kExact;
        bool ok = true;
        QString report;
        for (const auto& [stage, got, want] :
             {std::tuple{"x", x, aetest::jsonMatrix(expected["x"], "x")},
              std::tuple{"q", q, expectedHeads(expected, "q")},
              std::tuple{"k", k, expectedHeads(expected, "k")},
              std::tuple{"v", v, expectedHeads(expected, "v")}}) {
            report = worstOf(stage, got, want, tolerance, &ok);
            QVERIFY2(ok, qPrintable(report));
        }
        if (s.hasSource) {
            report = worstOf("x_source", xs, aetest::jsonMatrix(expected["x_source"], "x_source"),
                             tolerance, &ok);
            QVERIFY2(ok, qPrintable(report));
        }
        if (integers) {
            const double low = s.init->low, high = s.init->high;
            for (const MatrixD* w : {&p.query, &p.key, &p.value}) {
                for (Eigen::Index i = 0; i < w->size(); ++i) {
                    const double value = w->data()[i];
                    QVERIFY(value == std::floor(value) && value >= low && value < high);
                }
            }
        }
    }

    void splitMix64KnownValues() {
        // Published first outputs of SplitMix64 (Steele, Lea, Flood 2014) for seed 0.
        const std::uint64_t known[] = {0xE220A8397B1DCDAFULL, 0x6E789E6AA1B965F4ULL,
                                       0x06C45D188009454FULL, 0xF88BB8A8724C81ECULL,
                                       0x1B39896A51A8749BULL};
        ae::SplitMix64 engine(0);
        std::uint64_t state = 0;
        for (std::uint64_t value : known) {
            QCOMPARE(splitMix64(state), value);  // this file's own copy of the algorithm
            QCOMPARE(engine.next(), value);
        }
        // Further outputs, other seeds (including the full 64 bits) and the uniform mapping.
        for (std::uint64_t seed : {1ULL, 42ULL, 2026ULL, 0xFFFFFFFFFFFFFFFFULL}) {
            ae::SplitMix64 a(seed), b(seed);
            std::uint64_t s = seed;
            for (int i = 0; i < 1000; ++i)
                QCOMPARE(a.next(), splitMix64(s));
            std::uint64_t t = seed;
            for (int i = 0; i < 1000; ++i) {
                const double u = b.uniform01();
                QCOMPARE(u, static_cast<double>(splitMix64(t) >> 11) / 9007199254740992.0);
                QVERIFY(u >= 0.0 && u < 1.0);
            }
        }
    }

    // ------------------------------------------------------------ memory
    void engineBytesMatchesWhatTheEngineHolds_data() {
        QTest::addColumn<QString>("name");
        for (const QString& name : aetest::goldenNames())
            QTest::newRow(qPrintable(name)) << name;
    }
    void engineBytesMatchesWhatTheEngineHolds() {
        QFETCH(QString, name);
        const Scene scene = golden(name);
        checkHeldBytes<double>(scene);
        checkHeldBytes<float>(scene);
        ae::checkFitsInMemory(scene, sizeof(double), 24.0);  // must not throw
    }

    // A scene that would need about a terabyte is refused before anything that size exists:
    // only its 200000 x 1 embeddings are allocated, never an engine.
    void hugeSceneRefusedBeforeAllocating() {
        const double memory = ae::physicalMemoryBytes();
        if (memory <= 0) QSKIP("physical memory unknown on this machine");
        Scene s;
        const int tokens = 200000;
        s.tokens.assign(tokens, "t");
        s.embeddings = MatrixD::Ones(tokens, 1);
        s.projections.mode = ae::ProjectionMode::Identity;
        const double bytes = ae::engineBytes(s, sizeof(double));
        // 3 score-sized matrices of 200000^2 doubles dominate: 9.6e11 bytes.
        QVERIFY(bytes >= 3.0 * tokens * static_cast<double>(tokens) * 8);
        if (bytes <= memory) QSKIP("this machine has more than a terabyte of memory");
        try {
            ae::checkFitsInMemory(s, sizeof(double));
            QFAIL("not refused");
        } catch (const ae::SceneError& e) {
            QCOMPARE(QString::fromStdString(e.path()), QStringLiteral("scene"));
            QVERIFY2(QString::fromStdString(e.problem()).startsWith("too large: needs about "),
                     e.what());
        }
        // Float halves the need but still does not fit; the extra bytes per number count too.
        QVERIFY_THROWS_EXCEPTION(ae::SceneError, ae::checkFitsInMemory(s, sizeof(float)));
        // The stages and converted weights halve; the scene's own doubles and the bool mask do not.
        const double fixed = ae::sceneBytes(s) + static_cast<double>(tokens) * tokens;
        QCOMPARE(ae::engineBytes(s, sizeof(float)) - fixed, (bytes - fixed) / 2);
    }

private:
    static void maskedScenes(bool infiniteFillOnly) {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("useFloat");
        for (const char* name :
             {"blind-row", "blind-row-finite", "cross", "window", "journey-causal", "bert-style",
              "tutorial-variant", "init-cross", "gpt2-style", "journey"}) {
            if (infiniteFillOnly && !std::isinf(golden(name).maskFill)) continue;
            QTest::addRow("%s, double", name) << QString(name) << false;
            QTest::addRow("%s, float", name) << QString(name) << true;
        }
    }

    template <typename Scalar>
    static void checkRowSums(const Scene& scene, double tolerance) {
        AttentionEngine<Scalar> engine(scene);
        engine.compute();
        int rowsChecked = 0;
        for (int h = 0; h < engine.heads(); ++h) {
            for (int i = 0; i < scene.queryCount(); ++i) {
                const bool anyVisible = engine.allowed().row(i).any();
                const double sum = engine.weights(h).row(i).template cast<double>().sum();
                const double want = anyVisible || !std::isinf(scene.maskFill) ? 1.0 : 0.0;
                QVERIFY2(std::fabs(sum - want) <= tolerance,
                         qPrintable(QStringLiteral("head %1 row %2 sums to %3, expected %4")
                                        .arg(h)
                                        .arg(i)
                                        .arg(sum, 0, 'g', 17)
                                        .arg(want)));
                QVERIFY((engine.weights(h).row(i).array() >= 0).all());
                ++rowsChecked;
            }
        }
        QVERIFY(rowsChecked > 0);
    }

    template <typename Scalar>
    static void checkMaskedZero(const Scene& scene) {
        AttentionEngine<Scalar> engine(scene);
        engine.compute();
        int masked = 0;
        for (int h = 0; h < engine.heads(); ++h) {
            for (int i = 0; i < scene.queryCount(); ++i) {
                for (int j = 0; j < scene.keyCount(); ++j) {
                    if (engine.allowed()(i, j)) continue;
                    ++masked;
                    QVERIFY2(engine.weights(h)(i, j) == Scalar(0),
                             qPrintable(QStringLiteral("head %1 weight [%2][%3] = %4, masked")
                                            .arg(h)
                                            .arg(i)
                                            .arg(j)
                                            .arg(static_cast<double>(engine.weights(h)(i, j)), 0,
                                                 'g', 17)));
                }
            }
        }
        if (scene.mask.causal || scene.mask.window || scene.mask.allowed ||
            !scene.mask.padding.empty()) {
            QVERIFY(masked > 0);
        }
    }

    template <typename Scalar>
    static void checkFullyMasked(double tolerance) {
        AttentionEngine<Scalar> blind(golden("blind-row"));
        blind.compute();
        QCOMPARE(blind.fullyMaskedRows(), std::vector<int>{1});
        for (int h = 0; h < blind.heads(); ++h) {
            QVERIFY((blind.weights(h).row(1).array() == Scalar(0)).all());
            QVERIFY((blind.context(h).row(1).array() == Scalar(0)).all());
        }
        const Scene finiteScene = golden("blind-row-finite");
        QVERIFY(!std::isinf(finiteScene.maskFill));
        AttentionEngine<Scalar> finite(finiteScene);
        finite.compute();
        QCOMPARE(finite.fullyMaskedRows(), std::vector<int>{1});
        const double uniform = 1.0 / finiteScene.keyCount();
        for (int h = 0; h < finite.heads(); ++h) {
            for (int j = 0; j < finiteScene.keyCount(); ++j) {
                QVERIFY(std::fabs(finite.weights(h)(1, j) - uniform) <= tolerance);
            }
        }
    }

    template <typename Scalar>
    static void checkHeldBytes(const Scene& scene) {
        AttentionEngine<Scalar> e(scene);
        e.compute();
        // The stages counted from the accessors must agree with heldBytes(), which also counts
        // the engine's scene copy, its converted weights and its mask arrays.
        double stages = static_cast<double>(e.x().size() + e.query().size() + e.value().size() +
                                            e.concat().size() + e.output().size());
        if (scene.hasSource) stages += static_cast<double>(e.xSource().size());
        if (&e.key() != &e.query()) stages += static_cast<double>(e.key().size());
        for (int h = 0; h < e.heads(); ++h) {
            stages +=
                static_cast<double>(e.scores(h).size() + e.scaled(h).size() + e.weights(h).size());
        }
        const double cells = static_cast<double>(scene.queryCount()) * scene.keyCount();
        QVERIFY(e.heldBytes() > stages * sizeof(Scalar) + 2 * cells * sizeof(Scalar));
        const double estimate = ae::engineBytes(scene, sizeof(Scalar));
        QVERIFY2(
            estimate == e.heldBytes(),
            qPrintable(QStringLiteral("engineBytes %1, held %2").arg(estimate).arg(e.heldBytes())));
    }
};

QTEST_GUILESS_MAIN(TestProperties)
#include "test_properties.moc"
