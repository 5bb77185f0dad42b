#include "io/formats/matrix_files.h"

#include <QFile>
#include <QFileInfo>
#include <QList>
#include <charconv>
#include <cmath>
#include <cstring>

#include "io/scene/scene_file.h"

namespace ae::io {
namespace {

[[noreturn]] void refuse(const QString& problem) {
    throw MatrixFileError(problem.toStdString());
}

// The NPY header is a Python dict literal: {'descr': '<f8', 'fortran_order': False, 'shape': (2,
// 3), } This parser takes exactly that grammar and nothing more.
class NpyHeaderParser {
public:
    explicit NpyHeaderParser(const QByteArray& text) : text_(text) {}

    void parse(QByteArray& descr, bool& fortranOrder, QList<long long>& shape) {
        bool seenDescr = false, seenOrder = false, seenShape = false;
        expect('{');
        while (true) {
            skipSpace();
            if (peek() == '}') break;
            const QByteArray key = quoted();
            expect(':');
            if (key == "descr") {
                descr = quoted();
                seenDescr = true;
            } else if (key == "fortran_order") {
                fortranOrder = boolean();
                seenOrder = true;
            } else if (key == "shape") {
                shape = tuple();
                seenShape = true;
            } else {
                refuse("npy: unexpected header key '" + QString::fromLatin1(key) + "'");
            }
            skipSpace();
            if (peek() == ',') {
                ++pos_;
                continue;
            }
            skipSpace();
            if (peek() != '}') refuse("npy: malformed header");
        }
        ++pos_;
        skipSpace();
        if (pos_ != text_.size()) refuse("npy: malformed header");
        if (!seenDescr || !seenOrder || !seenShape)
            refuse("npy: header lacks descr, fortran_order or shape");
    }

private:
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    void skipSpace() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n'))
            ++pos_;
    }
    void expect(char c) {
        skipSpace();
        if (peek() != c) refuse(QStringLiteral("npy: malformed header (expected '%1')").arg(c));
        ++pos_;
    }
    QByteArray quoted() {
        skipSpace();
        const char quote = peek();
        if (quote != '\'' && quote != '"') refuse("npy: malformed header (expected a string)");
        const qsizetype end = text_.indexOf(quote, pos_ + 1);
        if (end < 0) refuse("npy: malformed header (unterminated string)");
        QByteArray s = text_.mid(pos_ + 1, end - pos_ - 1);
        pos_ = end + 1;
        return s;
    }
    bool boolean() {
        skipSpace();
        if (text_.mid(pos_, 4) == "True") {
            pos_ += 4;
            return true;
        }
        if (text_.mid(pos_, 5) == "False") {
            pos_ += 5;
            return false;
        }
        refuse("npy: malformed header (fortran_order must be True or False)");
    }
    QList<long long> tuple() {
        expect('(');
        QList<long long> dims;
        while (true) {
            skipSpace();
            if (peek() == ')') break;
            long long value = 0;
            const char* begin = text_.constData() + pos_;
            const auto [end, error] =
                std::from_chars(begin, text_.constData() + text_.size(), value);
            if (error != std::errc() || value < 0) refuse("npy: malformed shape");
            pos_ += end - begin;
            dims.append(value);
            skipSpace();
            if (peek() == ',')
                ++pos_;
            else if (peek() != ')')
                refuse("npy: malformed shape");
        }
        ++pos_;
        return dims;
    }

    const QByteArray& text_;
    qsizetype pos_ = 0;
};

double readScalar(const unsigned char* p, int size, bool bigEndian) {
    unsigned char bytes[8];
    for (int b = 0; b < size; ++b)
        bytes[b] = bigEndian ? p[size - 1 - b] : p[b];
    if (size == 4) {
        float f;
        std::memcpy(&f, bytes, 4);
        return f;
    }
    double d;
    std::memcpy(&d, bytes, 8);
    return d;
}

bool parseNumber(QByteArray field, bool decimalComma, double& value) {
    field = field.trimmed();
    if (decimalComma) field.replace(',', '.');
    if (field.startsWith('+')) field.remove(0, 1);
    if (field.isEmpty()) return false;
    const char* end = field.constData() + field.size();
    const auto result = std::from_chars(field.constData(), end, value);
    return result.ec == std::errc() && result.ptr == end && std::isfinite(value);
}

}  // namespace

namespace {

// What an .npy header says, checked: a float dtype, one or two dimensions, a size within limits.
struct NpyHeader {
    bool bigEndian = false;
    int itemSize = 0;  // 4 or 8
    bool fortranOrder = false;
    std::vector<long long> shape;  // as written: (n,) or (rows, cols)
    long long rows = 0, cols = 0;  // as read: (n,) is 1 x n
    qsizetype dataStart = 0;
};

NpyHeader parseNpyHeader(const QByteArray& bytes) {
    if (bytes.size() < 10 || !bytes.startsWith("\x93NUMPY"))
        refuse("npy: not an .npy file (bad magic)");
    const auto* u = reinterpret_cast<const unsigned char*>(bytes.constData());
    const int major = u[6];
    qsizetype headerLength = 0, headerStart = 0;
    if (major == 1) {
        headerLength = u[8] | (u[9] << 8);
        headerStart = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) refuse("npy: truncated header");
        headerLength = static_cast<qsizetype>(u[8]) | (static_cast<qsizetype>(u[9]) << 8) |
                       (static_cast<qsizetype>(u[10]) << 16) |
                       (static_cast<qsizetype>(u[11]) << 24);
        headerStart = 12;
    } else {
        refuse(QStringLiteral("npy: unsupported format version %1").arg(major));
    }
    if (headerLength < 0 || headerStart + headerLength > bytes.size())
        refuse("npy: truncated header");
    QByteArray descr;
    NpyHeader header;
    QList<long long> shape;
    NpyHeaderParser(bytes.mid(headerStart, headerLength)).parse(descr, header.fortranOrder, shape);

    if (descr.size() != 3 || (descr[0] != '<' && descr[0] != '>') || descr[1] != 'f' ||
        (descr[2] != '4' && descr[2] != '8')) {
        refuse("npy: unsupported dtype '" + QString::fromLatin1(descr) +
               "' (float32 or float64 expected)");
    }
    header.bigEndian = descr[0] == '>';
    header.itemSize = descr[2] - '0';
    header.shape.assign(shape.begin(), shape.end());
    long long rows = 0, cols = 0;
    if (shape.size() == 1) {
        rows = 1;
        cols = shape[0];
    } else if (shape.size() == 2) {
        rows = shape[0];
        cols = shape[1];
    } else {
        refuse(QStringLiteral("npy: expected a matrix or a vector, got %1 dimensions")
                   .arg(shape.size()));
    }
    if (rows == 0 || cols == 0) refuse("npy: the matrix is empty");
    if (rows > kMaxDrawnElements || cols > kMaxDrawnElements || rows * cols > kMaxDrawnElements) {
        refuse(QStringLiteral("npy: too large: %1x%2").arg(rows).arg(cols));
    }
    header.rows = rows;
    header.cols = cols;
    header.dataStart = headerStart + headerLength;
    const long long expected = rows * cols * header.itemSize;
    if (bytes.size() - header.dataStart != expected) {
        refuse(QStringLiteral("npy: expected %1 bytes of data for %2x%3, found %4")
                   .arg(expected)
                   .arg(rows)
                   .arg(cols)
                   .arg(bytes.size() - header.dataStart));
    }
    return header;
}

}  // namespace

NpyInfo readNpyInfo(const QString& fileName) {
    QFile file(fileName);
    if (QFileInfo(fileName).isDir() || !file.open(QIODevice::ReadOnly)) {
        refuse(fileName + ": cannot open: " +
               (QFileInfo(fileName).isDir() ? "is a directory" : file.errorString()));
    }
    // Mapped, so only the header's page is read: listing a large table costs nothing.
    const qint64 size = file.size();
    const uchar* map = size > 0 ? file.map(0, size) : nullptr;
    if (!map) refuse(fileName + ": not an .npy file (empty or unreadable)");
    try {
        const NpyHeader header = parseNpyHeader(QByteArray::fromRawData(
            reinterpret_cast<const char*>(map), static_cast<qsizetype>(size)));
        return {header.itemSize == 4 ? QStringLiteral("float32") : QStringLiteral("float64"),
                header.shape};
    } catch (const MatrixFileError& error) {
        refuse(fileName + ": " + QString::fromUtf8(error.what()));
    }
}

MatrixD parseNpy(const QByteArray& bytes) {
    const NpyHeader header = parseNpyHeader(bytes);
    const long long rows = header.rows, cols = header.cols;
    const int itemSize = header.itemSize;
    const bool bigEndian = header.bigEndian, fortranOrder = header.fortranOrder;
    const qsizetype dataStart = header.dataStart;
    const auto* u = reinterpret_cast<const unsigned char*>(bytes.constData());
    MatrixD m(rows, cols);
    const unsigned char* data = u + dataStart;
    for (long long k = 0; k < rows * cols; ++k) {
        const double value = readScalar(data + k * itemSize, itemSize, bigEndian);
        // Fortran order stores column after column.
        const long long r = fortranOrder ? k % rows : k / cols;
        const long long c = fortranOrder ? k / rows : k % cols;
        if (!std::isfinite(value)) {
            refuse(QStringLiteral("npy: [%1][%2]: expected a finite number").arg(r).arg(c));
        }
        m(r, c) = value;
    }
    return m;
}

MatrixD parseCsv(const QByteArray& text) {
    QList<QByteArray> lines;
    for (QByteArray line : text.split('\n')) {
        if (line.endsWith('\r')) line.chop(1);
        if (!line.trimmed().isEmpty()) lines.append(line);
    }
    if (lines.isEmpty()) refuse("csv: no numbers");
    const char separator = lines.first().contains(';')    ? ';'
                           : lines.first().contains('\t') ? '\t'
                                                          : ',';
    const bool decimalComma = separator != ',';
    const qsizetype cols = lines.first().count(separator) + 1;
    if (static_cast<long long>(lines.size()) * cols > kMaxDrawnElements) refuse("csv: too large");
    MatrixD m(lines.size(), cols);
    for (qsizetype r = 0; r < lines.size(); ++r) {
        const QList<QByteArray> fields = lines[r].split(separator);
        if (fields.size() != cols) {
            refuse(QStringLiteral("csv: line %1: expected %2 values, got %3")
                       .arg(r + 1)
                       .arg(cols)
                       .arg(fields.size()));
        }
        for (qsizetype c = 0; c < cols; ++c) {
            double value = 0;
            if (!parseNumber(fields[c], decimalComma, value)) {
                refuse(QStringLiteral("csv: line %1, value %2: '%3' is not a finite number")
                           .arg(r + 1)
                           .arg(c + 1)
                           .arg(QString::fromUtf8(fields[c].trimmed().left(40))));
            }
            m(r, c) = value;
        }
    }
    return m;
}

MatrixD readMatrixFile(const QString& fileName) {
    QFile file(fileName);
    if (QFileInfo(fileName).isDir() || !file.open(QIODevice::ReadOnly)) {
        refuse(fileName + ": cannot open: " +
               (QFileInfo(fileName).isDir() ? "is a directory" : file.errorString()));
    }
    try {
        const QByteArray bytes = file.readAll();
        return fileName.endsWith(".npy", Qt::CaseInsensitive) ? parseNpy(bytes) : parseCsv(bytes);
    } catch (const MatrixFileError& error) {
        refuse(fileName + ": " + QString::fromUtf8(error.what()));
    }
}

std::vector<std::string> readTokenFile(const QString& fileName) {
    QFile file(fileName);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        refuse(fileName + ": cannot open: " + file.errorString());
    std::vector<std::string> tokens;
    for (const QByteArray& line : file.readAll().split('\n')) {
        const QByteArray token = line.trimmed();
        if (!token.isEmpty()) tokens.push_back(token.toStdString());
    }
    if (tokens.empty()) refuse(fileName + ": no tokens");
    return tokens;
}

void requireShape(const MatrixD& m, long rows, long cols, const QString& what) {
    if ((rows >= 0 && m.rows() != rows) || (cols >= 0 && m.cols() != cols)) {
        refuse(QStringLiteral("%1: expected %2x%3, got %4x%5")
                   .arg(what)
                   .arg(rows >= 0 ? QString::number(rows) : QString::number(m.rows()))
                   .arg(cols >= 0 ? QString::number(cols) : QString::number(m.cols()))
                   .arg(m.rows())
                   .arg(m.cols()));
    }
}

}  // namespace ae::io
