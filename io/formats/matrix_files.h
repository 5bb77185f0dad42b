#pragma once
// Reading matrices from outside: .npy files and CSV text. Small, strict readers: anything they do
// not understand is refused with a one-line reason, never guessed at, and sizes are checked before
// allocating. (No maintained C++ NPY library is packaged for Debian 12; CSV dialects are too
// small a job for one.)

#include <QByteArray>
#include <QString>
#include <stdexcept>
#include <vector>

#include "core/scene.h"

namespace ae::io {

class MatrixFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// NPY format versions 1.0-3.0; dtype float32 or float64 ('<f4', '>f4', '<f8', '>f8'), C or
// Fortran order, shape (rows, cols) or (n,) read as one row. Values must be finite.
MatrixD parseNpy(const QByteArray& bytes);

// An .npy file's dtype ("float32" or "float64") and shape as written, from its header alone (the
// file is mapped, not read), with the same checks as parseNpy. Errors name the file.
struct NpyInfo {
    QString dtype;
    std::vector<long long> shape;
};
NpyInfo readNpyInfo(const QString& fileName);

// Rows of numbers separated by ',', ';' or tabs. With ';' or tab separators a decimal comma is
// accepted ("1,5" = 1.5), as spreadsheets in many countries write it. Every row must have the
// same number of values; blank lines are ignored.
MatrixD parseCsv(const QByteArray& text);

// By suffix: .npy, else CSV. Errors name the file.
MatrixD readMatrixFile(const QString& fileName);

// One token per line, surrounding whitespace trimmed, blank lines skipped.
std::vector<std::string> readTokenFile(const QString& fileName);

// Throws MatrixFileError("WHAT: expected RxC, got rxc") unless the shape fits; rows or cols < 0
// mean "any".
void requireShape(const MatrixD& m, long rows, long cols, const QString& what);

}  // namespace ae::io
