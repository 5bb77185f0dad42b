#pragma once
// Reading .safetensors files (the format Hugging Face models ship in): a small, strict reader in
// the style of matrix_files.h. Anything it does not understand is refused with a one-line reason
// naming the tensor and the numbers involved, never guessed at.
//
// Layout: 8 bytes little-endian N, then N bytes of a JSON object mapping each tensor name to
// {"dtype", "shape", "data_offsets": [begin, end)} (offsets relative to the first byte after the
// header), plus an optional "__metadata__" object of strings; then the data, little-endian, C
// order.
//
// The file is memory-mapped: opening and listing read only the header, so a model of gigabytes
// opens in milliseconds, and a tensor's bytes are touched only when it is read.

#include <QMap>
#include <QString>
#include <memory>
#include <utility>
#include <vector>

#include "core/scene.h"
#include "io/formats/matrix_files.h"

class QFile;

namespace ae::io {

struct TensorInfo {
    QString name;
    QString dtype;                 // as the file spells it: "F32", "F16", "BF16", "I64", ...
    std::vector<long long> shape;  // [] for a scalar
    long long begin = 0, end = 0;  // byte range within the data section
    long long elementCount() const;
};

// The header's shape as text, "[768, 2304]".
QString shapeText(const std::vector<long long>& shape);

class SafetensorsFile {
public:
    // Opens, maps and validates the header and every tensor's offsets (not the values). Throws
    // MatrixFileError naming the file for anything malformed.
    explicit SafetensorsFile(const QString& fileName);
    ~SafetensorsFile();
    SafetensorsFile(const SafetensorsFile&) = delete;
    SafetensorsFile& operator=(const SafetensorsFile&) = delete;

    const QString& fileName() const { return fileName_; }
    // Every tensor, in the order of their data (ascending begin).
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    // The "__metadata__" strings (empty without).
    const QMap<QString, QString>& metadata() const { return metadata_; }
    // nullptr if there is no tensor of that name.
    const TensorInfo* find(const QString& name) const;
    // The tensor's first byte in the mapped file (valid while this object lives).
    const unsigned char* tensorData(const TensorInfo& info) const { return data_ + info.begin; }

    // One tensor as doubles: a 0-D tensor as 1x1, 1-D [n] as one row 1 x n, 2-D [r, c] as r x c.
    // Refuses other ranks, dtypes other than F32, F16, BF16 and F64 (naming the dtype), a missing
    // name and values that are not finite (naming the first such index).
    MatrixD matrix(const QString& name) const;
    // The shape matrix() would return (rows, cols), from the header alone; the same refusals.
    std::pair<long long, long long> matrixShape(const QString& name) const;
    // Rows `rowIds` of the tensor as matrix() would return it, in that order: rowIds.size() x
    // cols. Only those rows are converted (and checked for non-finite values), so 6 rows of a
    // 50257 x 768 token table cost what 6 rows cost. An id past the end is refused.
    MatrixD rows(const QString& name, const std::vector<long long>& rowIds) const;

private:
    [[noreturn]] void refuse(const QString& problem) const;
    // The tensor if it can be read as a matrix (rows x cols as matrix() gives it); refuses
    // otherwise.
    const TensorInfo& readable(const QString& name, long long* rows, long long* cols) const;
    // Elements [first, first + count) of a float tensor, in file order, into out.
    void convert(const TensorInfo& info, long long first, long long count, double* out) const;
    void requireFinite(const TensorInfo& info, long long row, long long cols,
                       const double* values) const;

    QString fileName_;
    std::unique_ptr<QFile> file_;
    const unsigned char* data_ = nullptr;  // first byte after the header
    long long dataSize_ = 0;
    std::vector<TensorInfo> tensors_;
    QMap<QString, QString> metadata_;
};

// Headers longer than this are refused before anything is allocated: the reference
// implementation's own limit, far above any real model's (GPT-2's is ~15 kB).
constexpr long long kMaxSafetensorsHeader = 100'000'000;

}  // namespace ae::io
