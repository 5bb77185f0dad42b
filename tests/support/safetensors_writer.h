#pragma once
// Writing small .safetensors files in tests, so every test makes its own inputs (and its own
// broken ones) instead of depending on a downloaded model.
#include <QByteArray>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QtEndian>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/scene.h"

namespace ae::testing {

// Encoders for numbers that the format can hold exactly (the tests only use such numbers).
inline quint16 toHalf(double value) {
    // Normal halves only: enough for the test values (|x| in [2^-14, 65504]) and zero.
    if (value == 0) return std::signbit(value) ? 0x8000 : 0;
    const quint16 sign = value < 0 ? 0x8000 : 0;
    int exponent = 0;
    const double fraction = std::frexp(std::fabs(value), &exponent);  // [0.5, 1)
    const int mantissa = static_cast<int>(std::lround((fraction * 2 - 1) * 1024));
    return sign | static_cast<quint16>((exponent - 1 + 15) << 10) | static_cast<quint16>(mantissa);
}
inline quint16 toBfloat16(double value) {
    const float f = static_cast<float>(value);
    quint32 bits;
    std::memcpy(&bits, &f, 4);
    return static_cast<quint16>(bits >> 16);  // exact for numbers bfloat16 can hold
}

struct TestTensor {
    QString name;
    QString dtype;  // F32, F16, BF16, or anything with raw bytes given
    std::vector<long long> shape;
    QByteArray bytes;
};

// A matrix (row-major) as a tensor of the given float dtype and shape.
inline TestTensor tensor(const QString& name, const MatrixD& m, const QString& dtype = "F32",
                         std::vector<long long> shape = {}) {
    if (shape.empty()) shape = {static_cast<long long>(m.rows()), static_cast<long long>(m.cols())};
    TestTensor t{name, dtype, shape, {}};
    for (Eigen::Index k = 0; k < m.size(); ++k) {
        const double v = m.data()[k];
        if (dtype == "F32") {
            const float f = static_cast<float>(v);
            quint32 bits;
            std::memcpy(&bits, &f, 4);
            const quint32 le = qToLittleEndian(bits);
            t.bytes.append(reinterpret_cast<const char*>(&le), 4);
        } else {
            const quint16 le = qToLittleEndian(dtype == "F16" ? toHalf(v) : toBfloat16(v));
            t.bytes.append(reinterpret_cast<const char*>(&le), 2);
        }
    }
    return t;
}
inline TestTensor vectorTensor(const QString& name, const VectorD& v,
                               const QString& dtype = "F32") {
    return tensor(name, MatrixD(v.transpose()), dtype, {static_cast<long long>(v.size())});
}

inline QJsonArray shapeJson(const std::vector<long long>& shape) {
    QJsonArray a;
    for (long long d : shape)
        a.append(static_cast<double>(d));
    return a;
}

// The header JSON for tensors laid out one after another.
inline QJsonObject headerFor(const std::vector<TestTensor>& tensors) {
    QJsonObject header;
    long long offset = 0;
    for (const TestTensor& t : tensors) {
        QJsonObject entry{
            {"dtype", t.dtype},
            {"shape", shapeJson(t.shape)},
            {"data_offsets", QJsonArray{double(offset), double(offset + t.bytes.size())}}};
        header.insert(t.name, entry);
        offset += t.bytes.size();
    }
    return header;
}

inline QByteArray fileBytes(const QByteArray& headerText, const QByteArray& data) {
    const quint64 length = qToLittleEndian<quint64>(headerText.size());
    QByteArray bytes(reinterpret_cast<const char*>(&length), 8);
    return bytes + headerText + data;
}

inline QByteArray fileBytes(const QJsonObject& header, const std::vector<TestTensor>& tensors) {
    QByteArray data;
    for (const TestTensor& t : tensors)
        data += t.bytes;
    return fileBytes(QJsonDocument(header).toJson(QJsonDocument::Compact), data);
}

inline bool writeBytes(const QString& fileName, const QByteArray& bytes) {
    QFile file(fileName);
    return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

inline bool writeSafetensors(const QString& fileName, const std::vector<TestTensor>& tensors) {
    return writeBytes(fileName, fileBytes(headerFor(tensors), tensors));
}

}  // namespace ae::testing
