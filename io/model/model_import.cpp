#include "io/model/model_import.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringList>
#include <cmath>

#include "core/model/model.h"
#include "io/formats/safetensors.h"

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

namespace {

MatrixD pickRows(const MatrixD& m, const std::vector<long long>& rows, const QString& name) {
    MatrixD picked(static_cast<long>(rows.size()), m.cols());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] < 0 || rows[i] >= m.rows())
            refuse(QStringLiteral("tensor %1: row %2 is past the end of %3")
                       .arg(name)
                       .arg(rows[i])
                       .arg(dims(m)));
        picked.row(static_cast<long>(i)) = m.row(static_cast<long>(rows[i]));
    }
    return picked;
}

std::pair<long long, long long> npyShape(const QString& fileName) {
    const NpyInfo info = readNpyInfo(fileName);
    if (info.shape.size() == 1) return {1, info.shape[0]};
    return {info.shape[0], info.shape[1]};  // readNpyInfo refuses other ranks
}

bool isNpyFile(const QString& name) {
    return name.endsWith(".npy", Qt::CaseInsensitive) && QFileInfo(name).isFile();
}

}  // namespace

TensorReader tensorReader(const SafetensorsFile& file) {
    const auto inFile = [&file](const QString& name) {
        if (file.find(name)) return true;
        if (isNpyFile(name)) return false;
        refuse(QStringLiteral("%1: no tensor named %2 (%3 tensors; list them with "
                              "`attention-explorer import FILE --list`)")
                   .arg(file.fileName(), name)
                   .arg(file.tensors().size()));
    };
    TensorReader reader;
    reader.matrix = [&file, inFile](const QString& name) {
        return inFile(name) ? file.matrix(name) : readMatrixFile(name);
    };
    reader.shape = [&file, inFile](const QString& name) {
        return inFile(name) ? file.matrixShape(name) : npyShape(name);
    };
    reader.rows = [&file, inFile](const QString& name, const std::vector<long long>& rows) {
        return inFile(name) ? file.rows(name, rows) : pickRows(readMatrixFile(name), rows, name);
    };
    return reader;
}

TensorReader npyTensorReader() {
    const auto require = [](const QString& name) {
        if (!isNpyFile(name)) refuse(QStringLiteral("no .npy file named %1").arg(name));
    };
    TensorReader reader;
    reader.matrix = [require](const QString& name) {
        require(name);
        return readMatrixFile(name);
    };
    reader.shape = [require](const QString& name) {
        require(name);
        return npyShape(name);
    };
    reader.rows = [require](const QString& name, const std::vector<long long>& rows) {
        require(name);
        return pickRows(readMatrixFile(name), rows, name);
    };
    return reader;
}

namespace {

// The layer index in a name ("transformer.h.11.attn" → 11, "encoder.layer.3.x" → 3), or -1.
int layerOf(const QString& name) {
    for (const QString& part : name.split('.')) {
        bool ok = false;
        const int n = part.toInt(&ok);
        if (ok) return n;
    }
    return -1;
}

// A name without the ".npy" of a tensor that came as a file of its own.
QString stem(const QString& name) {
    return name.endsWith(".npy", Qt::CaseInsensitive) ? name.chopped(4) : name;
}

// The tensor of the lowest layer whose name ends with one of `suffixes` (tried in order).
QString lowestLayer(const std::vector<TensorShape>& tensors, const QStringList& suffixes) {
    for (const QString& suffix : suffixes) {
        QString best;
        int bestLayer = 0;
        for (const TensorShape& t : tensors) {
            const QString name = stem(t.name);
            if (name != suffix && !name.endsWith('.' + suffix)) continue;
            const int layer = layerOf(t.name);
            if (best.isEmpty() || layer < bestLayer || (layer == bestLayer && t.name < best)) {
                best = t.name;
                bestLayer = layer;
            }
        }
        if (!best.isEmpty()) return best;
    }
    return {};
}

// The sibling of `weight` ("x.weight" → "x.bias") if the file has it.
QString biasOf(const std::vector<TensorShape>& tensors, const QString& weight) {
    const QString npy = weight.endsWith(".npy", Qt::CaseInsensitive) ? weight.right(4) : QString();
    if (!stem(weight).endsWith(".weight")) return {};
    const QString bias = stem(weight).chopped(6) /* "weight" */ + "bias" + npy;
    for (const TensorShape& t : tensors)
        if (t.name == bias) return bias;
    return {};
}

const TensorShape* shapeOf(const std::vector<TensorShape>& tensors, const QString& name) {
    for (const TensorShape& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

// The names the family table's rows give the tensors an import reads, after a layer's prefix
// ("self_attn.q_proj.weight") or at the top ("wte.weight"): every family the engine runs is
// recognised as it spells itself, from its own row.
struct TableNames {
    QStringList fusedConv1D, fusedLinear, fusedOutput;  // [Q | K | V] and its output projection
    QStringList query, key, value, output;              // separate q, k, v
    QStringList tokenEmbedding, positionEmbedding;
    QStringList preNorm;  // the norm before attention (families whose norms come first)
};

TableNames tableNames() {
    TableNames names;
    for (const model::FamilyRow& row : model::familyTable()) {
        // A one-layer config of the row, with every optional tensor present.
        model::Config c;
        c.family = row.family;
        c.layers = 1;
        c.hidden = c.intermediate = 8;
        c.heads = c.kvHeads = 2;
        c.headDim = 4;
        c.vocab = c.positions = c.tokenTypes = 4;
        c.attentionBias = true;
        model::ModelWeights w;
        const model::Architecture& a = row.architecture;
        const bool fused = a.qkv != model::QkvStorage::Separate;
        for (const model::TensorSpec& spec : row.tensorNames(c, w)) {
            QString name = QString::fromStdString(spec.name);
            if (const int layer = name.indexOf(QLatin1String(".0.")); layer >= 0)
                name = name.mid(layer + 3);
            const model::LayerWeights& l = w.layers[0];
            const auto add = [&name](QStringList& list) {
                if (!list.contains(name)) list << name;
            };
            if (spec.slot == &l.qkv) {
                add(a.layout == model::WeightLayout::Conv1D ? names.fusedConv1D
                                                            : names.fusedLinear);
            } else if (spec.slot == &l.output) {
                add(fused ? names.fusedOutput : names.output);
            } else if (spec.slot == &l.query) {
                add(names.query);
            } else if (spec.slot == &l.key) {
                add(names.key);
            } else if (spec.slot == &l.value) {
                add(names.value);
            } else if (spec.slot == &w.tokenEmbedding) {
                add(names.tokenEmbedding);
            } else if (spec.slot == &w.positionEmbedding) {
                add(names.positionEmbedding);
            } else if (spec.slot == &l.norm1 && a.placement == model::NormPlacement::Pre) {
                add(names.preNorm);
            }
        }
    }
    return names;
}

// The table's names, then `others`: those of families the engine does not run yet, whose layers
// can still be imported one at a time.
QStringList withOthers(QStringList names, const QStringList& others) {
    for (const QString& name : others)
        if (!names.contains(name)) names << name;
    return names;
}

}  // namespace

ModelImportSpec guessImportSpec(const std::vector<TensorShape>& tensors) {
    ModelImportSpec spec;
    spec.heads = 0;
    static const TableNames table = tableNames();
    // GPT-2's Conv1D stores X·W; every other family here is nn.Linear.
    const QString conv1d = lowestLayer(tensors, table.fusedConv1D);
    const QString fusedLinear = lowestLayer(
        tensors,
        withOthers(table.fusedLinear, {"attention.query_key_value.weight", "qkv_proj.weight",
                                       "Wqkv.weight", "attn.qkv.weight"}));
    long long projectionWidth = 0;
    if (!conv1d.isEmpty()) {
        spec.layout = WeightLayout::XW;
        spec.qkv = conv1d;
        spec.output = lowestLayer(tensors, table.fusedOutput);
    } else if (!fusedLinear.isEmpty()) {
        spec.layout = WeightLayout::Linear;
        spec.qkv = fusedLinear;
        spec.output =
            lowestLayer(tensors, {"attention.dense.weight", "out_proj.weight", "attn.proj.weight"});
    } else {
        spec.layout = WeightLayout::Linear;
        spec.query =
            lowestLayer(tensors, withOthers(table.query, {"q_proj.weight", "query.weight",
                                                          "attention.wq.weight", "q_lin.weight"}));
        spec.key =
            lowestLayer(tensors, withOthers(table.key, {"k_proj.weight", "key.weight",
                                                        "attention.wk.weight", "k_lin.weight"}));
        spec.value =
            lowestLayer(tensors, withOthers(table.value, {"v_proj.weight", "value.weight",
                                                          "attention.wv.weight", "v_lin.weight"}));
        spec.output = lowestLayer(
            tensors, withOthers(table.output, {"out_proj.weight", "o_proj.weight",
                                               "attention.wo.weight", "out_lin.weight"}));
        spec.queryBias = biasOf(tensors, spec.query);
        spec.keyBias = biasOf(tensors, spec.key);
        spec.valueBias = biasOf(tensors, spec.value);
    }
    spec.qkvBias = biasOf(tensors, spec.qkv);
    spec.outputBias = biasOf(tensors, spec.output);

    // The width of Q: a third of a fused tensor's output side, or W_Q's output side.
    const QString widthFrom = spec.qkv.isEmpty() ? spec.query : spec.qkv;
    if (const TensorShape* t = shapeOf(tensors, widthFrom); t && t->shape.size() == 2) {
        const long long out = spec.layout == WeightLayout::XW ? t->shape[1] : t->shape[0];
        projectionWidth = spec.qkv.isEmpty() ? out : out / 3;
    }
    if (projectionWidth >= 64 && projectionWidth % 64 == 0) spec.heads = int(projectionWidth / 64);

    spec.embeddings = lowestLayer(
        tensors, withOthers(table.tokenEmbedding, {"wte", "word_embeddings.weight",
                                                   "tok_embeddings.weight", "embed_in.weight"}));
    spec.positions = lowestLayer(
        tensors, withOthers(table.positionEmbedding,
                            {"wpe", "position_embeddings.weight", "embed_positions.weight"}));
    spec.normWeight =
        lowestLayer(tensors, withOthers(table.preNorm, {"self_attn_layer_norm.weight"}));
    spec.normBias = biasOf(tensors, spec.normWeight);
    if (spec.normBias.isEmpty()) spec.normWeight.clear();  // RMSNorm has no bias: not ours
    bool encoder = false;
    for (const TensorShape& t : tensors)
        encoder = encoder || t.name.contains("encoder.");
    spec.causal = !encoder;
    return spec;
}

std::vector<long long> lookUpTokens(const std::vector<std::string>& vocabulary,
                                    const QString& words) {
    QHash<QString, long long> ids;
    bool byteLevel = false;
    for (std::size_t id = 0; id < vocabulary.size(); ++id) {
        const QString token = QString::fromStdString(vocabulary[id]);
        if (token.isEmpty()) continue;
        ids.insert(token, static_cast<long long>(id));
        byteLevel = byteLevel || token.startsWith(QChar(0x120));
    }
    std::vector<long long> result;
    const QStringList list = words.split(QRegularExpression("\\s+"), Qt::SkipEmptyParts);
    if (list.isEmpty()) refuse("tokens: type at least one word");
    for (qsizetype i = 0; i < list.size(); ++i) {
        const QString spaced = QChar(0x120) + list[i];
        if (byteLevel && i > 0 && ids.contains(spaced)) {
            result.push_back(ids.value(spaced));
        } else if (ids.contains(list[i])) {
            result.push_back(ids.value(list[i]));
        } else {
            refuse(QStringLiteral("tokens: \"%1\" is not in the vocabulary%2")
                       .arg(list[i], byteLevel && i > 0
                                         ? QStringLiteral(" (nor \"%1\")").arg(spaced)
                                         : QString()));
        }
    }
    return result;
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

    // 1. Embeddings: rows of the token table, vocab x dModel; only the chosen rows are read.
    if (spec.embeddings.isEmpty()) refuse("--embeddings: choose the token table");
    const auto [vocab, dModel] = read.shape(spec.embeddings);
    const long d = static_cast<long>(dModel);
    const long L = static_cast<long>(spec.tokenIds.size());
    std::vector<std::string> vocabulary;
    if (!spec.vocabularyFile.isEmpty()) vocabulary = readVocabulary(spec.vocabularyFile);
    for (long i = 0; i < L; ++i) {
        const long long id = spec.tokenIds[i];
        if (id >= vocab) {
            refuse(QStringLiteral("--rows: token id %1 is past the end of tensor %2 [%3, %4]")
                       .arg(id)
                       .arg(spec.embeddings)
                       .arg(vocab)
                       .arg(dModel));
        }
        const bool labelled =
            id < static_cast<long long>(vocabulary.size()) && !vocabulary[id].empty();
        scene.tokens.push_back(labelled ? vocabulary[id] : std::to_string(id));
    }
    scene.embeddings = read.rows(spec.embeddings, spec.tokenIds);

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

    // 4. Learned positions: only the first L rows matter, so only they are read.
    if (!spec.positions.isEmpty()) {
        const auto [rows, cols] = read.shape(spec.positions);
        if (cols != d || rows < L) {
            refuse(QStringLiteral("tensor %1: expected [>= %2, %3] for learned positions "
                                  "(%2 tokens, dModel %3), got [%4, %5]")
                       .arg(spec.positions)
                       .arg(L)
                       .arg(d)
                       .arg(rows)
                       .arg(cols));
        }
        std::vector<long long> first(L);
        for (long i = 0; i < L; ++i)
            first[i] = i;
        scene.positional.kind = PositionalKind::Learned;
        scene.positional.table = read.rows(spec.positions, first);
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
