#pragma once
// Shared by the test executables: the golden data in tests/data, a result read from an engine or
// from a result JSON, and a comparison that names the worst difference and where it is.
//
// A result is a list of named matrices in a fixed order (x, x_source, heads[h].q ... context,
// concat, output) plus divisor, allowed and fully_masked_rows. Differences are relative:
// |got - expected| / (1 + |expected|), the measure the reference's --check uses.

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/attention_engine.h"
#include "core/scene.h"

namespace aetest {

inline QString dataPath(const QString& relative) {
    return QDir(QStringLiteral(AE_TEST_DATA_DIR)).filePath(relative);
}

// NAME for every tests/data/NAME.scene.json that has a NAME.expected.json, sorted.
inline QStringList goldenNames() {
    QStringList names;
    const QDir dir(QStringLiteral(AE_TEST_DATA_DIR));
    for (const QString& file : dir.entryList({QStringLiteral("*.scene.json")}, QDir::Files)) {
        const QString name = file.chopped(static_cast<qsizetype>(sizeof(".scene.json") - 1));
        if (dir.exists(name + QStringLiteral(".expected.json"))) names << name;
    }
    names.sort();
    return names;
}

inline QByteArray readFile(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        throw std::runtime_error("cannot read " + path.toStdString());
    }
    return file.readAll();
}

inline QJsonDocument readJson(const QString& path) {
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(readFile(path), &error);
    if (error.error != QJsonParseError::NoError) {
        throw std::runtime_error(path.toStdString() + ": " + error.errorString().toStdString());
    }
    return doc;
}

// A JSON list of equally long lists of numbers. Throws on anything else.
inline ae::MatrixD jsonMatrix(const QJsonValue& value, const QString& what) {
    const auto bad = [&](const char* why) {
        throw std::runtime_error(what.toStdString() + ": " + why);
    };
    if (!value.isArray()) bad("not a list");
    const QJsonArray rows = value.toArray();
    if (rows.isEmpty()) return ae::MatrixD(0, 0);
    if (!rows.first().isArray()) bad("not a list of rows");
    const qsizetype cols = rows.first().toArray().size();
    ae::MatrixD m(rows.size(), cols);
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const QJsonArray row = rows[i].toArray();
        if (!rows[i].isArray() || row.size() != cols) bad("ragged rows");
        for (qsizetype j = 0; j < cols; ++j) {
            if (!row[j].isDouble()) bad("not a number");
            m(i, j) = row[j].toDouble();
        }
    }
    return m;
}

struct Result {
    double divisor = 0;
    ae::MatrixD allowed;
    std::vector<int> fullyMaskedRows;
    std::vector<std::pair<QString, ae::MatrixD>> matrices;

    const ae::MatrixD* find(const QString& name) const {
        for (const auto& [n, m] : matrices) {
            if (n == name) return &m;
        }
        return nullptr;
    }
};

inline const char* const kHeadStages[] = {"q", "k", "v", "scores", "scaled", "weights", "context"};

// A result JSON (format attention-explorer/result). Throws if it is malformed.
inline Result resultFromJson(const QJsonObject& o) {
    if (o.value("format") != QJsonValue("attention-explorer/result") ||
        o.value("version") != QJsonValue(1)) {
        throw std::runtime_error("not a result version 1");
    }
    Result r;
    if (!o.value("divisor").isDouble()) throw std::runtime_error("divisor missing");
    r.divisor = o.value("divisor").toDouble();
    r.allowed = jsonMatrix(o.value("allowed"), "allowed");
    for (const QJsonValue& v : o.value("fully_masked_rows").toArray())
        r.fullyMaskedRows.push_back(v.toInt());
    r.matrices.emplace_back("x", jsonMatrix(o.value("x"), "x"));
    if (o.contains("x_source"))
        r.matrices.emplace_back("x_source", jsonMatrix(o.value("x_source"), "x_source"));
    const QJsonArray heads = o.value("heads").toArray();
    for (qsizetype h = 0; h < heads.size(); ++h) {
        const QJsonObject head = heads[h].toObject();
        for (const char* stage : kHeadStages) {
            const QString name = QStringLiteral("heads[%1].%2").arg(h).arg(QLatin1String(stage));
            r.matrices.emplace_back(name, jsonMatrix(head.value(QLatin1String(stage)), name));
        }
    }
    r.matrices.emplace_back("concat", jsonMatrix(o.value("concat"), "concat"));
    if (o.contains("output"))
        r.matrices.emplace_back("output", jsonMatrix(o.value("output"), "output"));
    return r;
}

template <typename Scalar>
Result resultFromEngine(const ae::AttentionEngine<Scalar>& engine) {
    const auto d = [](const auto& m) { return ae::MatrixD(m.template cast<double>()); };
    Result r;
    r.divisor = engine.divisor();
    r.allowed = engine.allowed().template cast<double>().matrix();
    r.fullyMaskedRows = engine.fullyMaskedRows();
    r.matrices.emplace_back("x", d(engine.x()));
    if (engine.scene().hasSource) r.matrices.emplace_back("x_source", d(engine.xSource()));
    for (int h = 0; h < engine.heads(); ++h) {
        const auto name = [h](const char* stage) {
            return QStringLiteral("heads[%1].%2").arg(h).arg(QLatin1String(stage));
        };
        r.matrices.emplace_back(name("q"), d(engine.headQuery(h)));
        r.matrices.emplace_back(name("k"), d(engine.headKey(h)));
        r.matrices.emplace_back(name("v"), d(engine.headValue(h)));
        r.matrices.emplace_back(name("scores"), d(engine.scores(h)));
        r.matrices.emplace_back(name("scaled"), d(engine.scaled(h)));
        r.matrices.emplace_back(name("weights"), d(engine.weights(h)));
        r.matrices.emplace_back(name("context"), d(engine.context(h)));
    }
    r.matrices.emplace_back("concat", d(engine.concat()));
    if (engine.hasOutput()) r.matrices.emplace_back("output", d(engine.output()));
    return r;
}

inline double relativeDifference(double got, double expected) {
    if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
    return std::fabs(got - expected) / (1.0 + std::fabs(expected));
}

// The outcome of comparing two results: structural problems (any is a failure) and the worst
// numeric difference with its location.
struct Comparison {
    QStringList problems;
    double worst = 0;
    QString where = QStringLiteral("(nothing compared)");
    double got = 0, expected = 0;

    void matrix(const QString& name, const ae::MatrixD& g, const ae::MatrixD& e) {
        if (g.rows() != e.rows() || g.cols() != e.cols()) {
            problems << QStringLiteral("%1: shape %2x%3, expected %4x%5")
                            .arg(name)
                            .arg(g.rows())
                            .arg(g.cols())
                            .arg(e.rows())
                            .arg(e.cols());
            return;
        }
        for (Eigen::Index i = 0; i < e.rows(); ++i) {
            for (Eigen::Index j = 0; j < e.cols(); ++j) {
                const double diff = relativeDifference(g(i, j), e(i, j));
                if (!(diff <= worst) || where.startsWith('(')) {  // NaN counts as worst
                    worst = diff;
                    where = QStringLiteral("%1[%2][%3]").arg(name).arg(i).arg(j);
                    got = g(i, j);
                    expected = e(i, j);
                }
            }
        }
    }

    bool within(double tolerance) const { return problems.isEmpty() && worst <= tolerance; }

    QString report(double tolerance) const {
        QString text =
            QStringLiteral("max relative difference %1 (tolerance %2) at %3: got %4, expected %5")
                .arg(worst, 0, 'g', 3)
                .arg(tolerance, 0, 'g', 3)
                .arg(where)
                .arg(got, 0, 'g', 17)
                .arg(expected, 0, 'g', 17);
        for (const QString& p : problems)
            text += QStringLiteral("\n  ") + p;
        return text;
    }
};

// Every stage of `got` against `expected`; allowed and fully_masked_rows must match exactly.
inline Comparison compareResults(const Result& got, const Result& expected) {
    Comparison c;
    if (got.fullyMaskedRows != expected.fullyMaskedRows)
        c.problems << QStringLiteral("fully_masked_rows differ");
    if (got.allowed != expected.allowed) c.problems << QStringLiteral("allowed differs");
    c.matrix("divisor", ae::MatrixD::Constant(1, 1, got.divisor),
             ae::MatrixD::Constant(1, 1, expected.divisor));
    for (const auto& [name, m] : expected.matrices) {
        const ae::MatrixD* g = got.find(name);
        if (!g) {
            c.problems << name + QStringLiteral(" missing");
            continue;
        }
        c.matrix(name, *g, m);
    }
    for (const auto& [name, m] : got.matrices) {
        if (!expected.find(name)) c.problems << name + QStringLiteral(" present but not expected");
    }
    return c;
}

inline Result expectedResult(const QString& name) {
    return resultFromJson(readJson(dataPath(name + QStringLiteral(".expected.json"))).object());
}

}  // namespace aetest
