#pragma once
// The typed values of a scene file, each checked as the reference checks it, so a bad value gets
// the reference's message naming its path (`projections.key[2][0]: expected a finite number`).
// For the scene reader (io/scene/scene_reader.cpp) only.
#include <QJsonValue>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "core/scene.h"
#include "core/scene_error.h"

namespace ae::io::scene_values {

[[noreturn]] void fail(const QString& path, const QString& problem);
// "path[i]".
QString index(const QString& path, qsizetype i);
bool isObject(const QJsonValue& v);
// "true" JSON numbers only: booleans are not numbers here, as in the reference.
bool isNumber(const QJsonValue& v);
double number(const QJsonValue& v, const QString& path);

// An integral JSON number. Qt keeps integer literals that fit in 64 bits exactly; for larger
// ones only the double is known. Never converted to a narrower type before it has been checked.
struct Integer {
    double approx = 0;
    std::optional<qint64> exact;
    // The decimal digits, as the reference prints int(x) (a double's exact integer value).
    QString text() const {
        return exact ? QString::number(*exact) : QString::asprintf("%.0f", approx);
    }
    // Modulo 2^64, as the generator takes its seed.
    std::uint64_t modulo64() const {
        return exact ? static_cast<std::uint64_t>(*exact)
                     : static_cast<std::uint64_t>(std::fmod(approx, 18446744073709551616.0));
    }
};

Integer integer(const QJsonValue& v, const QString& path, std::optional<long long> low = {});
Integer integerValue(long long value);
bool boolean(const QJsonValue& v, const QString& path);
// A list of equally long rows of finite numbers; rows/cols < 0 mean "any".
MatrixD matrix(const QJsonValue& value, const QString& path, qsizetype rows = -1,
               qsizetype cols = -1);
VectorD vector(const QJsonValue& value, const QString& path, qsizetype n);
std::vector<std::string> tokens(const QJsonValue& value, const QString& path);
// Refuses rows x cols values before anything is allocated; returns cols, which then fits an int.
int checkSize(const QString& path, long long rows, const Integer& cols);

}  // namespace ae::io::scene_values
