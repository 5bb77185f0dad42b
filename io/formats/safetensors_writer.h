#pragma once
// Writing .safetensors files: the one home of the format's writing side (the reader is
// io/formats/safetensors.h, whose header comment describes the layout). Small and strict: a name
// that is empty, repeated or "__metadata__", a negative dimension or a value count that does not
// match the shape is refused, never written.
//
// The JSON header is padded with spaces to a multiple of 8 bytes, so the data section, and with
// it every F64 tensor laid end to end, starts 8-byte aligned in a mapped file: the model engine
// then reads F64 (and F32) weights in place (core/model/model_forward.cpp's WeightView).

#include <QByteArray>
#include <QMap>
#include <QString>
#include <string>
#include <vector>

#include "core/tensor_data.h"

namespace ae::io {

// One tensor's entry in the header: its name, dtype and shape (C order, [] for a scalar).
struct TensorHeaderEntry {
    std::string name;
    DType dtype = DType::F32;
    std::vector<long long> shape;
    long long byteCount() const;
};

// The bytes before the data (8-byte little-endian length, then the padded JSON) for tensors laid
// one after another in the given order, and the data section's length. Throws WriteError
// (io/formats/result_export.h) for a name or shape the format cannot hold (see above).
struct SafetensorsLayout {
    QByteArray header;
    long long dataBytes = 0;
};
SafetensorsLayout safetensorsLayout(const std::vector<TensorHeaderEntry>& tensors,
                                    const QMap<QString, QString>& metadata = {});

// A tensor to write from doubles: `values` holds the shape's product of numbers, row-major.
// F64 stores them exactly, F32 rounds each to the nearest float; no other dtype is written.
struct TensorToWrite {
    TensorHeaderEntry entry;
    const double* values = nullptr;
};
// Writes the file atomically (a temporary file and a rename). Throws WriteError naming the file
// or the tensor.
void writeSafetensors(const QString& fileName, const std::vector<TensorToWrite>& tensors,
                      const QMap<QString, QString>& metadata = {});

}  // namespace ae::io
