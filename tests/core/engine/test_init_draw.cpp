// Matrices drawn by `init` reproduce the golden expectations, SplitMix64 gives its published
// values, and sinusoidal positions follow the formula for any width and base.
// GCC 12 reports a false -Wmaybe-uninitialized inside Eigen's AVX-512 product kernels that this
// file's own matrix products instantiate (avx512fintrin.h, not this code).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <QTest>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "io/scene/scene_file.h"
#include "support/property_scenes.h"
#include "support/result_check.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::builtScene;
using aetest::golden;
using aetest::Inputs;
using aetest::kExact;
using aetest::Numbers;

namespace {

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

class TestInitDraw : public QObject {
    Q_OBJECT

private slots:
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
};

QTEST_GUILESS_MAIN(TestInitDraw)
#include "test_init_draw.moc"
