#include "io/formats/result_export.h"

#include <QDir>
#include <QFileInfo>
#include <QSaveFile>
#include <charconv>
#include <cmath>
#include <cstring>

#include "io/formats/json_numbers.h"

namespace ae::io {
namespace {

MatrixD allowedAsMatrix(const BoolMatrix& allowed) {
    return allowed.cast<double>().matrix();
}

}  // namespace

QByteArray resultJson(const AttentionEngine<double>& engine) {
    // Written by hand rather than through QJsonDocument: a BERT-sized result holds millions of
    // numbers, and the layout (one key per line, rows inline) should stay readable.
    QByteArray out;
    out.reserve(1 << 16);
    out.append("{\"format\": \"attention-explorer/result\", \"version\": 1, \"divisor\": ");
    json::appendNumber(out, engine.divisor());
    out.append(",\n\"allowed\": [");
    const BoolMatrix& allowed = engine.allowed();
    for (Eigen::Index i = 0; i < allowed.rows(); ++i) {
        if (i) out.append(", ");
        out.append('[');
        for (Eigen::Index j = 0; j < allowed.cols(); ++j)
            out.append(j ? ", " : "").append(allowed(i, j) ? '1' : '0');
        out.append(']');
    }
    out.append("],\n\"fully_masked_rows\": [");
    for (size_t r = 0; r < engine.fullyMaskedRows().size(); ++r) {
        if (r) out.append(", ");
        out.append(QByteArray::number(engine.fullyMaskedRows()[r]));
    }
    out.append("],\n\"x\": ");
    json::appendMatrix(out, engine.x(), ", ");
    if (engine.scene().hasSource) {
        out.append(",\n\"x_source\": ");
        json::appendMatrix(out, engine.xSource(), ", ");
    }
    out.append(",\n\"heads\": [");
    for (int h = 0; h < engine.heads(); ++h) {
        out.append(h ? ",\n{" : "\n{");
        bool first = true;
        for (const StageInfo& stage : kStages) {
            if (!stage.perHead || !engine.hasStage(stage.stage)) continue;
            out.append(first ? "\"" : ",\n \"").append(stage.key).append("\": ");
            json::appendMatrix(out, engine.stageMatrix(stage.stage, h), ", ");
            first = false;
        }
        out.append('}');
    }
    out.append(']');
    for (const StageInfo& stage : kStages) {
        if (stage.perHead || !engine.hasStage(stage.stage)) continue;
        out.append(",\n\"").append(stage.key).append("\": ");
        json::appendMatrix(out, engine.stageMatrix(stage.stage, 0), ", ");
    }
    out.append("}\n");
    return out;
}

void writeFileAtomically(const QString& fileName, const QByteArray& bytes) {
    QSaveFile file(fileName);
    if (!file.open(QIODevice::WriteOnly)) {
        throw WriteError(
            QStringLiteral("%1: cannot write: %2").arg(fileName, file.errorString()).toStdString());
    }
    // Qt 6.4's commit() ignores a failed flush of its write buffer (a full disk, a size limit)
    // and renames the truncated file over the old one: flush first, and give up if that fails.
    if (file.write(bytes) != bytes.size() || !file.flush() || !file.commit()) {
        throw WriteError(
            QStringLiteral("%1: cannot write: %2").arg(fileName, file.errorString()).toStdString());
    }
}

QByteArray npyBytes(const MatrixD& m) {
    QByteArray header =
        QStringLiteral("{'descr': '<f8', 'fortran_order': False, 'shape': (%1, %2), }")
            .arg(m.rows())
            .arg(m.cols())
            .toLatin1();
    // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64
    // and ended by a newline, as the format asks.
    const qsizetype unpadded = 10 + header.size() + 1;
    header.append(QByteArray((64 - unpadded % 64) % 64, ' '));
    header.append('\n');
    QByteArray out("\x93NUMPY\x01\x00", 8);
    out.append(static_cast<char>(header.size() & 0xff));
    out.append(static_cast<char>((header.size() >> 8) & 0xff));
    out.append(header);
    const qsizetype start = out.size();
    out.resize(start + static_cast<qsizetype>(m.size() * sizeof(double)));
    char* data = out.data() + start;
    for (Eigen::Index i = 0; i < m.size(); ++i) {
        // Little-endian on every host.
        std::uint64_t bits;
        const double v = m.data()[i];
        std::memcpy(&bits, &v, sizeof bits);
        for (int b = 0; b < 8; ++b)
            *data++ = static_cast<char>((bits >> (8 * b)) & 0xff);
    }
    return out;
}

QByteArray csvBytes(const MatrixD& m) {
    QByteArray out;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            if (j) out.append(',');
            json::appendNumber(out, m(i, j));
        }
        out.append('\n');
    }
    return out;
}

std::vector<std::pair<std::string, MatrixD>> resultMatrices(const AttentionEngine<double>& engine) {
    std::vector<std::pair<std::string, MatrixD>> list;
    list.emplace_back("x", engine.x());
    if (engine.scene().hasSource) list.emplace_back("x_source", engine.xSource());
    for (int h = 0; h < engine.heads(); ++h) {
        const std::string prefix = "head" + std::to_string(h) + "_";
        for (const StageInfo& stage : kStages) {
            if (stage.perHead && engine.hasStage(stage.stage))
                list.emplace_back(prefix + stage.key, engine.stageMatrix(stage.stage, h));
        }
    }
    for (const StageInfo& stage : kStages) {
        if (!stage.perHead && engine.hasStage(stage.stage))
            list.emplace_back(stage.key, engine.stageMatrix(stage.stage, 0));
    }
    list.emplace_back("allowed", allowedAsMatrix(engine.allowed()));
    return list;
}

void writeMatrixDirectory(const AttentionEngine<double>& engine, const QString& directory,
                          MatrixFormat format) {
    if (QFileInfo(directory).exists() && !QFileInfo(directory).isDir()) {
        throw WriteError(
            QStringLiteral("%1: cannot write: not a directory").arg(directory).toStdString());
    }
    if (!QDir().mkpath(directory)) {
        throw WriteError(
            QStringLiteral("%1: cannot create the directory").arg(directory).toStdString());
    }
    const QString suffix = format == MatrixFormat::Npy ? ".npy" : ".csv";
    for (const auto& [name, matrix] : resultMatrices(engine)) {
        writeFileAtomically(QDir(directory).filePath(QString::fromStdString(name) + suffix),
                            format == MatrixFormat::Npy ? npyBytes(matrix) : csvBytes(matrix));
    }
}

}  // namespace ae::io
