#pragma once
// Writing an engine's results: the result JSON (format attention-explorer/result, version 1), and
// directories of .npy or .csv files, one per matrix. Every file is written atomically.

#include <QByteArray>
#include <QString>

#include "core/attention_engine.h"

namespace ae::io {

// Thrown when a file cannot be written; the message names the file and the writer's reason.
class WriteError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The result JSON for a computed engine, numbers in shortest round-trip form.
QByteArray resultJson(const AttentionEngine<double>& engine);

// Writes `bytes` to `fileName` through a temporary file and a rename: never a partial file.
void writeFileAtomically(const QString& fileName, const QByteArray& bytes);

// A row-major matrix as NPY version 1.0: '<f8', C order, shape (rows, cols).
QByteArray npyBytes(const MatrixD& m);
// A matrix as CSV: comma-separated, no header, '.' decimal mark, shortest round-trip digits.
QByteArray csvBytes(const MatrixD& m);

enum class MatrixFormat { Npy, Csv };
// Writes x, x_source, head{h}_{KEY} for every per-head stage of core/stages.h (q, k, v, scores,
// scaled, weights, context), then the others (concat, output) and allowed into `directory`
// (created if missing), each as NAME.npy or NAME.csv.
void writeMatrixDirectory(const AttentionEngine<double>& engine, const QString& directory,
                          MatrixFormat format);

// Every named matrix of a result, in the order above.
std::vector<std::pair<std::string, MatrixD>> resultMatrices(const AttentionEngine<double>& engine);

}  // namespace ae::io
