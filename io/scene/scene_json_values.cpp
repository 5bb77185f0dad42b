#include "io/scene/scene_json_values.h"

#include <QJsonArray>
#include <cmath>
#include <cstdio>

#include "core/init_draw.h"
#include "io/scene/scene_file.h"
#include "io/scene/scene_json_text.h"
#include "io/scene/scene_model_numbers.h"

namespace ae::io::scene_values {

using scene_text::isNonFinite;

[[noreturn]] void fail(const QString& path, const QString& problem) {
    throw SceneError(path.toStdString(), problem.toStdString());
}

QString index(const QString& path, qsizetype i) {
    return QStringLiteral("%1[%2]").arg(path).arg(i);
}

bool isObject(const QJsonValue& v) {
    return v.isObject() && !isNonFinite(v);
}

// "true" JSON numbers only: booleans are not numbers here, as in the reference.
bool isNumber(const QJsonValue& v) {
    return v.isDouble();
}

double number(const QJsonValue& v, const QString& path) {
    if (!isNumber(v) || !std::isfinite(v.toDouble())) fail(path, "expected a finite number");
    return v.toDouble();
}

Integer integer(const QJsonValue& v, const QString& path, std::optional<long long> low) {
    if (!isNumber(v)) fail(path, "expected an integer");
    const double d = v.toDouble();
    if (!std::isfinite(d) || std::floor(d) != d) fail(path, "expected an integer");
    Integer x;
    x.approx = d;
    // toInteger gives its default when the value does not fit: two defaults tell that apart.
    if (v.toInteger(0) == v.toInteger(1)) x.exact = v.toInteger();
    if (low && (x.exact ? *x.exact < *low : d < static_cast<double>(*low))) {
        fail(path, QStringLiteral("must be at least %1").arg(*low));
    }
    return x;
}

bool boolean(const QJsonValue& v, const QString& path) {
    if (!v.isBool()) fail(path, "expected true or false");
    return v.toBool();
}

// A list of equally long rows of finite numbers; rows/cols < 0 mean "any".
MatrixD matrix(const QJsonValue& value, const QString& path, qsizetype rows, qsizetype cols) {
    if (model_numbers::isMarker(value)) {
        const MatrixD m =
            model_numbers::resolve(value, path, model_numbers::Scope::current(), false);
        if ((rows >= 0 && m.rows() != rows) || (cols >= 0 && m.cols() != cols)) {
            fail(path, QStringLiteral("the model's is %1x%2, the scene needs %3x%4")
                           .arg(m.rows())
                           .arg(m.cols())
                           .arg(rows >= 0 ? rows : m.rows())
                           .arg(cols >= 0 ? cols : m.cols()));
        }
        return m;
    }
    const QJsonArray list = value.toArray();
    bool allRows = value.isArray() && !list.isEmpty();
    for (const QJsonValue& r : list)
        allRows = allRows && r.isArray();
    if (!allRows) fail(path, "expected a non-empty matrix (a list of rows)");
    const qsizetype c = list.first().toArray().size();
    if (c == 0) fail(path, "rows must not be empty");
    MatrixD m(list.size(), c);
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QJsonArray row = list[i].toArray();
        if (row.size() != c) {
            fail(index(path, i),
                 QStringLiteral("expected %1 values, got %2").arg(c).arg(row.size()));
        }
        for (qsizetype j = 0; j < c; ++j)
            m(i, j) = number(row[j], index(index(path, i), j));
    }
    if ((rows >= 0 && list.size() != rows) || (cols >= 0 && c != cols)) {
        fail(path, QStringLiteral("expected %1x%2, got %3x%4")
                       .arg(rows >= 0 ? rows : list.size())
                       .arg(cols >= 0 ? cols : c)
                       .arg(list.size())
                       .arg(c));
    }
    return m;
}

VectorD vector(const QJsonValue& value, const QString& path, qsizetype n) {
    if (model_numbers::isMarker(value)) {
        const MatrixD m =
            model_numbers::resolve(value, path, model_numbers::Scope::current(), true);
        if (m.cols() != 1 || m.rows() != n) {
            fail(path, QStringLiteral("the model's has %1 values, the scene needs %2")
                           .arg(m.size())
                           .arg(n));
        }
        return m.col(0);
    }
    if (!value.isArray()) fail(path, "expected a list of numbers");
    const QJsonArray list = value.toArray();
    if (list.size() != n)
        fail(path, QStringLiteral("expected %1 values, got %2").arg(n).arg(list.size()));
    VectorD v(n);
    for (qsizetype i = 0; i < n; ++i)
        v(i) = number(list[i], index(path, i));
    return v;
}

std::vector<std::string> tokens(const QJsonValue& value, const QString& path) {
    const QJsonArray list = value.toArray();
    bool ok = value.isArray() && !list.isEmpty();
    for (const QJsonValue& t : list)
        ok = ok && t.isString();
    if (!ok) fail(path, "expected a non-empty list of strings");
    std::vector<std::string> out;
    for (const QJsonValue& t : list)
        out.push_back(t.toString().toStdString());
    return out;
}

// Refuses rows x cols values before anything is allocated; returns cols, which then fits an int.
int checkSize(const QString& path, long long rows, const Integer& cols) {
    // In long double: the product of two 64-bit values must neither wrap nor round before the
    // comparison, and n * 8 / 2^30 is then rounded once, as the reference's division is.
    const long double n = static_cast<long double>(rows) *
                          (cols.exact ? static_cast<long double>(*cols.exact) : cols.approx);
    if (n > static_cast<long double>(kMaxDrawnElements)) {
        char gib[64];
        std::snprintf(gib, sizeof gib, "%.1f", static_cast<double>(n * 8 / (1LL << 30)));
        fail(path, QStringLiteral("too large: %1x%2 would need %3 GiB")
                       .arg(rows)
                       .arg(cols.text())
                       .arg(gib));
    }
    return static_cast<int>(*cols.exact);
}

Integer integerValue(long long value) {
    Integer x;
    x.approx = static_cast<double>(value);
    x.exact = value;
    return x;
}

}  // namespace ae::io::scene_values
