#include "io/formats/safetensors.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QStringList>
#include <QtEndian>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/tensor_data.h"
#include "io/scene/scene_file.h"

namespace ae::io {
namespace {

// Bytes per element of every dtype the format defines. Offsets of all of them are checked, so a
// file with integer buffers (GPT-2's causal-mask "bias" in some exports) still opens; only the
// float ones can be read as matrices.
int itemSize(const QString& dtype) {
    static const QMap<QString, int> sizes = {{"BOOL", 1},    {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1},
                                             {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
                                             {"BF16", 2},    {"I32", 4}, {"U32", 4}, {"F32", 4},
                                             {"F64", 8},     {"I64", 8}, {"U64", 8}};
    return sizes.value(dtype, 0);
}

}  // namespace

long long TensorInfo::elementCount() const {
    long long n = 1;
    for (long long d : shape)
        n *= d;
    return n;
}

QString shapeText(const std::vector<long long>& shape) {
    QStringList parts;
    for (long long d : shape)
        parts << QString::number(d);
    return '[' + parts.join(", ") + ']';
}

void SafetensorsFile::refuse(const QString& problem) const {
    throw MatrixFileError((fileName_ + ": " + problem).toStdString());
}

SafetensorsFile::~SafetensorsFile() = default;

SafetensorsFile::SafetensorsFile(const QString& fileName)
    : fileName_(fileName), file_(std::make_unique<QFile>(fileName)) {
    if (QFileInfo(fileName).isDir()) refuse("cannot open: is a directory");
    if (!file_->open(QIODevice::ReadOnly)) refuse("cannot open: " + file_->errorString());
    const long long fileSize = file_->size();
    if (fileSize < 8) {
        refuse(QStringLiteral("truncated: %1 bytes, shorter than the 8-byte header length")
                   .arg(fileSize));
    }
    const uchar* map = file_->map(0, fileSize);
    if (!map) refuse("cannot map: " + file_->errorString());

    const quint64 headerLength = qFromLittleEndian<quint64>(map);
    if (headerLength > static_cast<quint64>(kMaxSafetensorsHeader)) {
        refuse(QStringLiteral("header length %1 is absurd (limit %2 bytes): not a safetensors "
                              "file, or a corrupt one")
                   .arg(headerLength)
                   .arg(kMaxSafetensorsHeader));
    }
    if (static_cast<long long>(headerLength) > fileSize - 8) {
        refuse(QStringLiteral("header length %1 is past the end of the file (%2 bytes): truncated")
                   .arg(headerLength)
                   .arg(fileSize));
    }
    data_ = map + 8 + headerLength;
    dataSize_ = fileSize - 8 - static_cast<long long>(headerLength);

    QJsonParseError parseError;
    const QJsonDocument document =
        QJsonDocument::fromJson(QByteArray::fromRawData(reinterpret_cast<const char*>(map + 8),
                                                        static_cast<qsizetype>(headerLength)),
                                &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        refuse(QStringLiteral("header: not JSON (%1 at byte %2)")
                   .arg(parseError.errorString())
                   .arg(parseError.offset));
    }
    if (!document.isObject()) refuse("header: expected a JSON object");

    const QJsonObject header = document.object();
    for (auto it = header.begin(); it != header.end(); ++it) {
        const QString name = it.key();
        if (name == "__metadata__") {
            if (!it.value().isObject()) refuse("header: __metadata__: expected an object");
            const QJsonObject meta = it.value().toObject();
            for (auto m = meta.begin(); m != meta.end(); ++m) {
                if (!m.value().isString())
                    refuse("header: __metadata__." + m.key() + ": expected a string");
                metadata_.insert(m.key(), m.value().toString());
            }
            continue;
        }
        const QString where = "tensor " + name;
        if (!it.value().isObject()) refuse(where + ": expected an object");
        const QJsonObject entry = it.value().toObject();
        TensorInfo info;
        info.name = name;
        if (!entry.value("dtype").isString()) refuse(where + ": dtype: expected a string");
        info.dtype = entry.value("dtype").toString();
        const int size = itemSize(info.dtype);
        if (size == 0) refuse(where + ": unknown dtype " + info.dtype);

        if (!entry.value("shape").isArray()) refuse(where + ": shape: expected an array");
        for (const QJsonValue& d : entry.value("shape").toArray()) {
            const double v = d.toDouble(-1);
            if (!d.isDouble() || v < 0 || v != std::floor(v) || v > 9.0e15)
                refuse(where + ": shape: expected non-negative integers");
            info.shape.push_back(static_cast<long long>(v));
        }
        // Bounded by the data's size at every factor, so the count cannot overflow: the test
        // divides before it multiplies (count * d itself could pass 2^63 first).
        long long count = 1;
        for (long long d : info.shape) {
            const bool tooMany = count != 0 && d > dataSize_ / count;
            count = tooMany ? dataSize_ + 1 : count * d;
            if (count > dataSize_) {
                refuse(QStringLiteral("%1: shape %2 needs more bytes than the file's %3 of data")
                           .arg(where, shapeText(info.shape))
                           .arg(dataSize_));
            }
        }

        const QJsonArray offsets = entry.value("data_offsets").toArray();
        if (offsets.size() != 2 || !offsets[0].isDouble() || !offsets[1].isDouble())
            refuse(where + ": data_offsets: expected [begin, end]");
        const double begin = offsets[0].toDouble(), end = offsets[1].toDouble();
        if (begin < 0 || end < begin || begin != std::floor(begin) || end != std::floor(end))
            refuse(where + ": data_offsets: expected integers 0 <= begin <= end");
        if (end > static_cast<double>(dataSize_)) {
            refuse(QStringLiteral("%1: data_offsets [%2, %3) past the end of the data (%4 bytes): "
                                  "truncated file")
                       .arg(where)
                       .arg(static_cast<long long>(begin))
                       .arg(static_cast<long long>(end))
                       .arg(dataSize_));
        }
        info.begin = static_cast<long long>(begin);
        info.end = static_cast<long long>(end);
        if (info.end - info.begin != count * size) {
            refuse(QStringLiteral("%1: data_offsets [%2, %3) hold %4 bytes, but %5 %6 needs %7")
                       .arg(where)
                       .arg(info.begin)
                       .arg(info.end)
                       .arg(info.end - info.begin)
                       .arg(info.dtype, shapeText(info.shape))
                       .arg(count * size));
        }
        tensors_.push_back(std::move(info));
    }

    std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    for (std::size_t i = 1; i < tensors_.size(); ++i) {
        const TensorInfo& a = tensors_[i - 1];
        const TensorInfo& b = tensors_[i];
        // Empty tensors own no bytes and overlap nothing.
        if (b.begin < a.end && b.end > b.begin) {
            refuse(QStringLiteral("tensors %1 [%2, %3) and %4 [%5, %6) overlap")
                       .arg(a.name)
                       .arg(a.begin)
                       .arg(a.end)
                       .arg(b.name)
                       .arg(b.begin)
                       .arg(b.end));
        }
    }
}

const TensorInfo* SafetensorsFile::find(const QString& name) const {
    for (const TensorInfo& info : tensors_)
        if (info.name == name) return &info;
    return nullptr;
}

const TensorInfo& SafetensorsFile::readable(const QString& name, long long* rows,
                                            long long* cols) const {
    const TensorInfo* info = find(name);
    if (!info) refuse("no tensor named " + name);
    const QString where = "tensor " + name;
    DType dtype;
    if (!dtypeFromName(info->dtype.toStdString(), &dtype)) {
        refuse(QStringLiteral("%1: unsupported dtype %2 (F32, F16, BF16 or F64 expected)")
                   .arg(where, info->dtype));
    }
    *rows = 1;
    *cols = 1;
    if (info->shape.size() == 1) {
        *cols = info->shape[0];
    } else if (info->shape.size() == 2) {
        *rows = info->shape[0];
        *cols = info->shape[1];
    } else if (!info->shape.empty()) {
        refuse(QStringLiteral("%1: shape %2 has %3 dimensions; only vectors and matrices can be "
                              "read")
                   .arg(where, shapeText(info->shape))
                   .arg(info->shape.size()));
    }
    return *info;
}

std::pair<long long, long long> SafetensorsFile::matrixShape(const QString& name) const {
    long long rows = 0, cols = 0;
    readable(name, &rows, &cols);
    return {rows, cols};
}

void SafetensorsFile::convert(const TensorInfo& info, long long first, long long count,
                              double* out) const {
    DType dtype = DType::F32;
    dtypeFromName(info.dtype.toStdString(), &dtype);  // readable() accepted it
    convertElements(data_ + info.begin, dtype, first, count, out);
}

void SafetensorsFile::requireFinite(const TensorInfo& info, long long row, long long cols,
                                    const double* values) const {
    for (long long c = 0; c < cols; ++c) {
        if (!std::isfinite(values[c])) {
            refuse(QStringLiteral("tensor %1: element [%2][%3] of %4 is %5: expected finite "
                                  "numbers")
                       .arg(info.name)
                       .arg(row)
                       .arg(c)
                       .arg(shapeText(info.shape))
                       .arg(values[c]));
        }
    }
}

MatrixD SafetensorsFile::matrix(const QString& name) const {
    long long rows = 0, cols = 0;
    const TensorInfo& info = readable(name, &rows, &cols);
    if (rows * cols > kMaxDrawnElements)
        refuse("tensor " + name + ": too large: " + shapeText(info.shape));
    MatrixD m(rows, cols);  // row-major, as the file's C order
    convert(info, 0, rows * cols, m.data());
    for (long long r = 0; r < rows; ++r)
        requireFinite(info, r, cols, m.data() + r * cols);
    return m;
}

MatrixD SafetensorsFile::rows(const QString& name, const std::vector<long long>& rowIds) const {
    long long rows = 0, cols = 0;
    const TensorInfo& info = readable(name, &rows, &cols);
    const auto n = static_cast<long long>(rowIds.size());
    if (n * cols > kMaxDrawnElements) refuse("tensor " + name + ": too many rows asked for");
    MatrixD m(n, cols);
    for (long long i = 0; i < n; ++i) {
        const long long r = rowIds[i];
        if (r < 0 || r >= rows) {
            refuse(QStringLiteral("tensor %1: row %2 is past the end of %3")
                       .arg(name)
                       .arg(r)
                       .arg(shapeText(info.shape)));
        }
        double* out = m.data() + i * cols;
        convert(info, r * cols, cols, out);
        requireFinite(info, r, cols, out);
    }
    return m;
}

}  // namespace ae::io
