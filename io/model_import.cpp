#include "model_import.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <cmath>

#include "safetensors.h"

namespace ae::io {
namespace {

[[noreturn]] void refuse(const QString& problem) {
    throw ModelImportError(problem.toStdString());
}

QString dims(const MatrixD& m) {
    return QStringLiteral("[%1, %2]").arg(m.rows()).arg(m.cols());
}

QString layoutName(WeightLayout layout) {
    return layout == WeightLayout::XW ? QStringLiteral("xw") : QStringLiteral("linear");
}

// The layer's view of a weight: dModel-side rows, out-side columns (the engine's X·W).
MatrixD oriented(const MatrixD& stored, WeightLayout layout) {
    return layout == WeightLayout::XW ? stored : MatrixD(stored.transpose());
}

// Refuses a projection whose input side is not `in` (or whose output side, if `out` >= 0, is not
// `out`); the message gives the stored shape expected in this layout, and suggests the other
// layout when the transposed tensor would fit.
void requireProjection(const QString& name, const MatrixD& stored, WeightLayout layout, long in,
                       long outMultiple, long out, const QString& role) {
    const MatrixD w = oriented(stored, layout);
    const bool fits = w.rows() == in && (out >= 0 ? w.cols() == out : w.cols() % outMultiple == 0);
    if (fits && w.cols() > 0) return;
    const QString outText = out >= 0          ? QString::number(out)
                            : outMultiple > 1 ? QStringLiteral("%1p").arg(outMultiple)
                                              : QStringLiteral("p");
    const QString expected = layout == WeightLayout::XW
                                 ? QStringLiteral("[%1, %2]").arg(in).arg(outText)
                                 : QStringLiteral("[%1, %2]").arg(outText).arg(in);
    const MatrixD other =
        oriented(stored, layout == WeightLayout::XW ? WeightLayout::Linear : WeightLayout::XW);
    const bool otherFits =
        other.rows() == in && (out >= 0 ? other.cols() == out : other.cols() % outMultiple == 0);
    refuse(QStringLiteral("tensor %1: expected %2 for %3 in layout %4, got %5%6")
               .arg(name, expected, role, layoutName(layout), dims(stored),
                    otherFits ? QStringLiteral(" (try --layout %1)")
                                    .arg(layout == WeightLayout::XW ? "linear" : "xw")
                              : QString()));
}

// A bias: stored [n] (read as 1 x n) or [1, n].
VectorD biasVector(const TensorReader& read, const QString& name, long n, const QString& role) {
    const MatrixD b = read(name);
    if (b.rows() != 1 || b.cols() != n) {
        refuse(QStringLiteral("tensor %1: expected [%2] for %3, got %4")
                   .arg(name)
                   .arg(n)
                   .arg(role, b.rows() == 1 ? QStringLiteral("[%1]").arg(b.cols()) : dims(b)));
    }
    return b.row(0).transpose();
}

}  // namespace

TensorReader tensorReader(const SafetensorsFile& file) {
    return [&file](const QString& name) -> MatrixD {
        if (!file.find(name) && name.endsWith(".npy", Qt::CaseInsensitive) &&
            QFileInfo(name).isFile()) {
            return readMatrixFile(name);
        }
        if (!file.find(name)) {
            refuse(QStringLiteral("%1: no tensor named %2 (%3 tensors; list them with "
                                  "`attention-explorer import FILE --list`)")
                       .arg(file.fileName(), name)
                       .arg(file.tensors().size()));
        }
        return file.matrix(name);
    };
}

std::vector<long long> parseTokenIds(const QString& text) {
    std::vector<long long> ids;
    for (const QString& part : text.split(',')) {
        bool ok = false;
        const long long id = part.trimmed().toLongLong(&ok);
        if (!ok || id < 0) refuse("--rows: expected token ids such as 464,3290, got " + text);
        ids.push_back(id);
    }
    return ids;
}

std::vector<std::string> readVocabulary(const QString& fileName) {
    QFile file(fileName);
    if (!file.open(QIODevice::ReadOnly)) refuse(fileName + ": cannot open: " + file.errorString());
    const QByteArray bytes = file.readAll();
    std::vector<std::string> tokens;
    if (bytes.trimmed().startsWith('{')) {
        QJsonParseError error;
        const QJsonDocument document = QJsonDocument::fromJson(bytes, &error);
        if (!document.isObject())
            refuse(fileName + ": not a JSON object of token → id (" + error.errorString() + ")");
        const QJsonObject object = document.object();
        for (auto it = object.begin(); it != object.end(); ++it) {
            const double id = it.value().toDouble(-1);
            if (!it.value().isDouble() || id < 0 || id != std::floor(id) || id > 1e8) {
                refuse(fileName + ": token " + it.key() + ": expected a non-negative integer id");
            }
            const auto index = static_cast<std::size_t>(id);
            if (index >= tokens.size()) tokens.resize(index + 1);
            tokens[index] = it.key().toStdString();
        }
    } else {
        // One token per line, kept as written (a token may be a space): line k is id k.
        QList<QByteArray> lines = bytes.split('\n');
        if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
        for (QByteArray line : lines) {
            if (line.endsWith('\r')) line.chop(1);
            tokens.push_back(line.toStdString());
        }
    }
    if (tokens.empty()) refuse(fileName + ": no tokens");
    return tokens;
}

Scene importModel(const TensorReader& read, const ModelImportSpec& spec) {
    const WeightLayout layout = spec.layout;
    Scene scene;
    scene.title = spec.title.toStdString();
    if (spec.tokenIds.empty()) refuse("--rows: give at least one token id");

    // 1. Embeddings: rows of the token table, vocab x dModel.
    const MatrixD table = read(spec.embeddings);
    const long d = table.cols();
    const long L = static_cast<long>(spec.tokenIds.size());
    scene.embeddings.resize(L, d);
    std::vector<std::string> vocabulary;
    if (!spec.vocabularyFile.isEmpty()) vocabulary = readVocabulary(spec.vocabularyFile);
    for (long i = 0; i < L; ++i) {
        const long long id = spec.tokenIds[i];
        if (id >= table.rows()) {
            refuse(QStringLiteral("--rows: token id %1 is past the end of tensor %2 %3")
                       .arg(id)
                       .arg(spec.embeddings, dims(table)));
        }
        scene.embeddings.row(i) = table.row(id);
        const bool labelled =
            id < static_cast<long long>(vocabulary.size()) && !vocabulary[id].empty();
        scene.tokens.push_back(labelled ? vocabulary[id] : std::to_string(id));
    }

    // 2. Q, K, V: each dModel x dProj.
    Projections& proj = scene.projections;
    proj.mode = ProjectionMode::Separate;
    const bool fused = !spec.qkv.isEmpty();
    if (fused == !spec.query.isEmpty() || spec.query.isEmpty() != spec.key.isEmpty() ||
        spec.query.isEmpty() != spec.value.isEmpty()) {
        refuse("give either --qkv NAME or all of --query, --key and --value");
    }
    long p = 0;
    if (fused) {
        const MatrixD stored = read(spec.qkv);
        requireProjection(spec.qkv, stored, layout, d, 3, -1,
                          "a fused QKV with dModel " + QString::number(d));
        const MatrixD w = oriented(stored, layout);  // d x 3p
        p = w.cols() / 3;
        proj.query = w.middleCols(0, p);
        proj.key = w.middleCols(p, p);
        proj.value = w.middleCols(2 * p, p);
        if (!spec.qkvBias.isEmpty()) {
            const VectorD b = biasVector(read, spec.qkvBias, 3 * p, "the fused QKV bias");
            proj.queryBias = b.segment(0, p);
            proj.keyBias = b.segment(p, p);
            proj.valueBias = b.segment(2 * p, p);
        }
    } else {
        const MatrixD q = read(spec.query);
        requireProjection(spec.query, q, layout, d, 1, -1, "W_Q with dModel " + QString::number(d));
        proj.query = oriented(q, layout);
        p = proj.query.cols();
        const MatrixD k = read(spec.key);
        requireProjection(spec.key, k, layout, d, 1, p, "W_K like W_Q");
        proj.key = oriented(k, layout);
        const MatrixD v = read(spec.value);
        requireProjection(spec.value, v, layout, d, 1, p, "W_V like W_Q");
        proj.value = oriented(v, layout);
        if (!spec.queryBias.isEmpty()) proj.queryBias = biasVector(read, spec.queryBias, p, "b_Q");
        if (!spec.keyBias.isEmpty()) proj.keyBias = biasVector(read, spec.keyBias, p, "b_K");
        if (!spec.valueBias.isEmpty()) proj.valueBias = biasVector(read, spec.valueBias, p, "b_V");
    }
    if (!spec.qkvBias.isEmpty() && !fused) refuse("--qkv-bias needs --qkv");
    // Absent biases are zeros, as the scene reader makes them.
    for (VectorD* b : {&proj.queryBias, &proj.keyBias, &proj.valueBias})
        if (b->size() == 0) *b = VectorD::Zero(p);

    // 3. W_O: dProj x dOut.
    if (!spec.output.isEmpty()) {
        const MatrixD o = read(spec.output);
        // W_O's input side is dProj; its output side is free (dModel in every real model).
        const MatrixD w = oriented(o, layout);
        if (w.rows() != p || w.cols() == 0) {
            const QString expected = layout == WeightLayout::XW
                                         ? QStringLiteral("[%1, dOut]").arg(p)
                                         : QStringLiteral("[dOut, %1]").arg(p);
            refuse(QStringLiteral("tensor %1: expected %2 for W_O in layout %3 (dProj %4), got %5")
                       .arg(spec.output, expected, layoutName(layout))
                       .arg(p)
                       .arg(dims(o)));
        }
        proj.hasOutput = true;
        proj.output = w;
        proj.outputBias = spec.outputBias.isEmpty()
                              ? VectorD::Zero(w.cols())
                              : biasVector(read, spec.outputBias, w.cols(), "b_O");
    } else if (!spec.outputBias.isEmpty()) {
        refuse("--output-bias needs --output");
    }

    // 4. Learned positions: only the first L rows matter, so only they are kept.
    if (!spec.positions.isEmpty()) {
        const MatrixD table = read(spec.positions);
        if (table.cols() != d || table.rows() < L) {
            refuse(QStringLiteral("tensor %1: expected [>= %2, %3] for learned positions "
                                  "(%2 tokens, dModel %3), got %4")
                       .arg(spec.positions)
                       .arg(L)
                       .arg(d)
                       .arg(dims(table)));
        }
        scene.positional.kind = PositionalKind::Learned;
        scene.positional.table = table.topRows(L);
    }

    // 5. Layer norm before the layer (GPT-2's ln_1).
    if (spec.normWeight.isEmpty() != spec.normBias.isEmpty())
        refuse("give both --norm-weight and --norm-bias, or neither");
    if (!spec.normWeight.isEmpty()) {
        scene.norm.enabled = true;
        scene.norm.weight = biasVector(read, spec.normWeight, d, "the layer norm weight (dModel)");
        scene.norm.bias = biasVector(read, spec.normBias, d, "the layer norm bias (dModel)");
    }

    // 6. Heads: each a contiguous block of dProj / heads columns, as in every model we import.
    if (spec.heads < 1 || p % spec.heads != 0) {
        refuse(QStringLiteral("--heads %1: must divide the projection width %2 (Q is %3)")
                   .arg(spec.heads)
                   .arg(p)
                   .arg(dims(proj.query)));
    }
    scene.heads = spec.heads;
    scene.mask.causal = spec.causal;
    return scene;
}

}  // namespace ae::io
