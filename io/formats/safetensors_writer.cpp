#include "io/formats/safetensors_writer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QSet>
#include <QtEndian>
#include <cstring>

#include "io/formats/result_export.h"

namespace ae::io {

long long TensorHeaderEntry::byteCount() const {
    long long count = 1;
    for (long long s : shape)
        count *= s;
    return count * dtypeSize(dtype);
}

SafetensorsLayout safetensorsLayout(const std::vector<TensorHeaderEntry>& tensors,
                                    const QMap<QString, QString>& metadata) {
    QJsonObject header;
    QSet<QString> names;
    long long offset = 0;
    for (const TensorHeaderEntry& t : tensors) {
        const QString name = QString::fromStdString(t.name);
        if (name.isEmpty() || name == "__metadata__")
            throw WriteError("safetensors: a tensor may not be named \"" + t.name + "\"");
        if (names.contains(name)) throw WriteError("safetensors: tensor " + t.name + " twice");
        names.insert(name);
        QJsonArray shape;
        for (long long s : t.shape) {
            if (s < 0)
                throw WriteError("safetensors: tensor " + t.name + " has a negative dimension");
            shape.append(static_cast<double>(s));
        }
        const long long bytes = t.byteCount();
        header[name] = QJsonObject{
            {"dtype", QString::fromLatin1(dtypeName(t.dtype))},
            {"shape", shape},
            {"data_offsets",
             QJsonArray{static_cast<double>(offset), static_cast<double>(offset + bytes)}}};
        offset += bytes;
    }
    if (!metadata.isEmpty()) {
        QJsonObject strings;
        for (auto it = metadata.begin(); it != metadata.end(); ++it)
            strings[it.key()] = it.value();
        header["__metadata__"] = strings;
    }
    QByteArray json = QJsonDocument(header).toJson(QJsonDocument::Compact);
    while (json.size() % 8 != 0)
        json.append(' ');
    const quint64 length = qToLittleEndian<quint64>(static_cast<quint64>(json.size()));
    SafetensorsLayout layout;
    layout.header = QByteArray(reinterpret_cast<const char*>(&length), 8) + json;
    layout.dataBytes = offset;
    return layout;
}

void writeSafetensors(const QString& fileName, const std::vector<TensorToWrite>& tensors,
                      const QMap<QString, QString>& metadata) {
    std::vector<TensorHeaderEntry> entries;
    for (const TensorToWrite& t : tensors) {
        if (t.entry.dtype != DType::F32 && t.entry.dtype != DType::F64) {
            throw WriteError("safetensors: tensor " + t.entry.name +
                             ": only F32 and F64 are written, not " + dtypeName(t.entry.dtype));
        }
        if (!t.values && t.entry.byteCount() > 0)
            throw WriteError("safetensors: tensor " + t.entry.name + " has no values");
        entries.push_back(t.entry);
    }
    const SafetensorsLayout layout = safetensorsLayout(entries, metadata);
    QSaveFile file(fileName);
    const auto fail = [&](const QString& why) {
        throw WriteError((fileName + ": cannot write: " + why).toStdString());
    };
    if (!file.open(QIODevice::WriteOnly)) fail(file.errorString());
    if (file.write(layout.header) != layout.header.size()) fail(file.errorString());
    for (const TensorToWrite& t : tensors) {
        const long long count = t.entry.byteCount() / dtypeSize(t.entry.dtype);
        QByteArray bytes(static_cast<qsizetype>(t.entry.byteCount()), Qt::Uninitialized);
        for (long long i = 0; i < count; ++i) {
            if (t.entry.dtype == DType::F64) {
                const double v = qToLittleEndian(t.values[i]);
                std::memcpy(bytes.data() + i * 8, &v, 8);
            } else {
                const float v = qToLittleEndian(static_cast<float>(t.values[i]));
                std::memcpy(bytes.data() + i * 4, &v, 4);
            }
        }
        if (file.write(bytes) != bytes.size()) fail(file.errorString());
    }
    if (!file.commit()) fail(file.errorString());
}

}  // namespace ae::io
