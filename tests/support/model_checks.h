#pragma once
// Comparing a whole model's run (core/model/model.h) with a result JSON of
// shared/reference/model_reference.py (the golden models' expected-ids-*.json), field by field
// with the reference's own measure: |a − b| / (1 + |b|).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/model/model.h"

namespace ae::testing {

inline QString goldenModelDir(const QString& name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/") + name;
}

inline QJsonObject readJsonFile(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

inline std::vector<long long> jsonIds(const QJsonArray& a) {
    std::vector<long long> ids;
    for (const QJsonValue& v : a)
        ids.push_back(v.toInteger());
    return ids;
}

// The run options a reference result was made with: its attention mask and token types.
inline model::RunOptions referenceOptions(const QJsonObject& reference) {
    model::RunOptions options;
    for (const QJsonValue& v : reference.value("attention_mask").toArray())
        options.attentionMask.push_back(v.toInt());
    for (const QJsonValue& v : reference.value("token_types").toArray())
        options.tokenTypes.push_back(v.toInt());
    return options;
}

struct Difference {
    double worst = 0;  // inf when a shape differs
    QString where;
};

// A T x n JSON matrix against `m`: the worst relative error so far is kept in `d`.
template <typename Derived>
void compareMatrix(const QJsonValue& expected, const Eigen::MatrixBase<Derived>& m,
                   const QString& name, Difference& d) {
    const QJsonArray rows = expected.toArray();
    if (rows.size() != m.rows() || (m.rows() > 0 && rows[0].toArray().size() != m.cols())) {
        d.worst = INFINITY;
        d.where = name + QStringLiteral(": shape %1 x %2").arg(m.rows()).arg(m.cols());
        return;
    }
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        const QJsonArray row = rows[static_cast<int>(i)].toArray();
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            const double b = row[static_cast<int>(j)].toDouble();
            const double a = static_cast<double>(m(i, j));
            const double e = std::isfinite(a) ? std::fabs(a - b) / (1.0 + std::fabs(b)) : INFINITY;
            if (e > d.worst) {
                d.worst = e;
                d.where = name + QStringLiteral("[%1][%2] (got %3, expected %4)")
                                     .arg(i)
                                     .arg(j)
                                     .arg(a, 0, 'g', 17)
                                     .arg(b, 0, 'g', 17);
            }
        }
    }
}

// Every numeric field of the reference result against the run.
template <typename Scalar>
Difference compareWithReference(const model::ModelRun<Scalar>& run, const QJsonObject& expected) {
    Difference d;
    const QJsonArray layers = expected.value("layers").toArray();
    if (layers.size() != static_cast<int>(run.layers.size())) {
        d.worst = INFINITY;
        d.where = "layers";
        return d;
    }
    for (int l = 0; l < layers.size(); ++l) {
        const QJsonObject layer = layers[l].toObject();
        const QString p = QStringLiteral("layers[%1].").arg(l);
        compareMatrix(layer.value("hidden_in"), run.layers[l].hiddenIn, p + "hidden_in", d);
        const QJsonArray heads = layer.value("heads").toArray();
        if (heads.size() != run.config.heads) {
            d.worst = INFINITY;
            d.where = p + "heads";
            return d;
        }
        for (int h = 0; h < heads.size(); ++h) {
            const QJsonObject head = heads[h].toObject();
            const QString ph = p + QStringLiteral("heads[%1].").arg(h);
            compareMatrix(head.value("q"), run.q(l, h), ph + "q", d);
            compareMatrix(head.value("k"), run.k(l, h), ph + "k", d);
            compareMatrix(head.value("v"), run.v(l, h), ph + "v", d);
            compareMatrix(head.value("scores"), run.layers[l].scores[h], ph + "scores", d);
            compareMatrix(head.value("weights"), run.layers[l].weights[h], ph + "weights", d);
            // MPNet's position bias exactly when the reference has one.
            if (head.contains("position_bias") != !run.positionBias.empty()) {
                d.worst = INFINITY;
                d.where = ph + "position_bias: in one result only";
                return d;
            }
            if (head.contains("position_bias"))
                compareMatrix(head.value("position_bias"), run.positionBias[h],
                              ph + "position_bias", d);
            // DeBERTa's terms, each exactly when the reference has it.
            for (const auto& [key, terms] :
                 {std::pair{QStringLiteral("c2p"), &run.layers[l].contentToPosition},
                  std::pair{QStringLiteral("p2c"), &run.layers[l].positionToContent}}) {
                if (head.contains(key) != !terms->empty()) {
                    d.worst = INFINITY;
                    d.where = ph + key + ": in one result only";
                    return d;
                }
                if (head.contains(key))
                    compareMatrix(head.value(key), (*terms)[static_cast<std::size_t>(h)], ph + key,
                                  d);
            }
        }
    }
    if (expected.contains("logits")) {
        compareMatrix(expected.value("logits"), run.logits, "logits", d);
    } else {
        compareMatrix(expected.value("last_hidden"), run.lastHidden, "last_hidden", d);
    }
    // The masked-LM logits exactly when the reference reads the head: a stray one fails too.
    if (expected.contains("mlm_logits")) {
        compareMatrix(expected.value("mlm_logits"), run.maskedLmLogits, "mlm_logits", d);
    } else if (run.maskedLmLogits.size() > 0) {
        d.worst = INFINITY;
        d.where = "mlm_logits present, but the reference reads no masked-LM head";
    }
    return d;
}

// The worst relative error between two runs of the same model (float against double).
template <typename A, typename B>
double worstBetween(const model::ModelRun<A>& a, const model::ModelRun<B>& b) {
    double worst = 0;
    auto update = [&](const auto& x, const auto& y) {
        const auto xd = x.template cast<double>();
        const auto yd = y.template cast<double>();
        worst = std::max(worst, ((xd - yd).array().abs() / (1.0 + yd.array().abs())).maxCoeff());
    };
    for (std::size_t l = 0; l < a.layers.size(); ++l) {
        update(a.layers[l].hiddenIn, b.layers[l].hiddenIn);
        for (int h = 0; h < a.config.heads; ++h) {
            const int li = static_cast<int>(l);
            update(a.q(li, h), b.q(li, h));
            update(a.k(li, h), b.k(li, h));
            update(a.v(li, h), b.v(li, h));
            update(a.layers[l].scores[h], b.layers[l].scores[h]);
            update(a.layers[l].weights[h], b.layers[l].weights[h]);
        }
    }
    if (a.config.isDecoder()) {
        update(a.logits, b.logits);
    } else {
        update(a.lastHidden, b.lastHidden);
    }
    return worst;
}

// ---- Encoder–decoder models (tests/data/seq2seq-models) ----

inline QString seq2seqDir(const QString& name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/seq2seq-models/") + name;
}

// The trained translator that ships with the app (resources/models/tiny-translate).
inline QString tinyTranslateDir() {
    return QStringLiteral(AE_SHIPPED_MODELS_DIR "/tiny-translate");
}

// A reference result's attention_mask (empty when it has none).
inline std::vector<int> maskOf(const QJsonObject& o) {
    std::vector<int> mask;
    for (const QJsonValue& v : o.value("attention_mask").toArray())
        mask.push_back(v.toInt());
    return mask;
}

// One stack's heads (self or cross) of a layer against the reference's list.
template <typename Scalar>
void compareHeads(const QJsonArray& expected, const model::ModelRun<Scalar>& run, int layer,
                  bool cross, const QString& where, Difference& d) {
    const model::LayerRecord<Scalar>& record = run.layers[static_cast<std::size_t>(layer)];
    const int heads = run.config.heads;
    const Eigen::Index hd = run.config.headDim;
    if (expected.size() != heads) {
        d.worst = INFINITY;
        d.where = where + QStringLiteral(": %1 heads, expected %2").arg(heads).arg(expected.size());
        return;
    }
    for (int h = 0; h < heads; ++h) {
        const QJsonObject e = expected[h].toObject();
        const QString at = where + QStringLiteral("[%1].").arg(h);
        const auto n = static_cast<std::size_t>(h);
        if (cross) {
            compareMatrix(e.value("q"), record.cross.query.middleCols(h * hd, hd), at + "q", d);
            compareMatrix(e.value("k"), record.cross.key.middleCols(h * hd, hd), at + "k", d);
            compareMatrix(e.value("v"), record.cross.value.middleCols(h * hd, hd), at + "v", d);
            compareMatrix(e.value("scores"), record.cross.scores[n], at + "scores", d);
            compareMatrix(e.value("weights"), record.cross.weights[n], at + "weights", d);
            if (e.contains("position_bias")) {
                d.worst = INFINITY;
                d.where = at + "position_bias: cross-attention has none";
            }
            continue;
        }
        compareMatrix(e.value("q"), run.q(layer, h), at + "q", d);
        compareMatrix(e.value("k"), run.k(layer, h), at + "k", d);
        compareMatrix(e.value("v"), run.v(layer, h), at + "v", d);
        compareMatrix(e.value("scores"), record.scores[n], at + "scores", d);
        compareMatrix(e.value("weights"), record.weights[n], at + "weights", d);
        if (e.contains("position_bias") != !run.positionBias.empty()) {
            d.worst = INFINITY;
            d.where = at + "position_bias: present in one result only";
        } else if (e.contains("position_bias")) {
            compareMatrix(e.value("position_bias"), run.positionBias[n], at + "position_bias", d);
        }
    }
}

template <typename Scalar>
void compareStack(const QJsonArray& expected, const model::ModelRun<Scalar>& run,
                  const QString& stack, Difference& d) {
    if (expected.size() != static_cast<int>(run.layers.size())) {
        d.worst = INFINITY;
        d.where =
            stack +
            QStringLiteral(": %1 layers, expected %2").arg(run.layers.size()).arg(expected.size());
        return;
    }
    for (int l = 0; l < expected.size(); ++l) {
        const QJsonObject e = expected[l].toObject();
        const QString at = stack + QStringLiteral("[%1]").arg(l);
        compareMatrix(e.value("hidden_in"), run.layers[static_cast<std::size_t>(l)].hiddenIn,
                      at + ".hidden_in", d);
        compareHeads(e.value("heads").toArray(), run, l, false, at + ".heads", d);
        if (e.contains("cross_heads") == run.layers[static_cast<std::size_t>(l)].cross.empty()) {
            d.worst = INFINITY;
            d.where = at + ".cross_heads: present in one result only";
        } else if (e.contains("cross_heads")) {
            compareHeads(e.value("cross_heads").toArray(), run, l, true, at + ".cross_heads", d);
        }
    }
}

// Every field of the reference's encoder–decoder result (seq2seq_families.check's), its worst
// relative error.
template <typename Scalar>
Difference compareEncoderDecoder(const model::EncoderDecoderRun<Scalar>& run,
                                 const QJsonObject& expected) {
    Difference d;
    if (jsonIds(expected.value("tokens").toArray()) != run.encoder.tokens ||
        jsonIds(expected.value("decoder_tokens").toArray()) != run.decoder.tokens ||
        maskOf(expected) != run.encoder.attentionMask) {
        d.worst = INFINITY;
        d.where = "tokens, decoder_tokens or attention_mask";
        return d;
    }
    compareStack(expected.value("encoder_layers").toArray(), run.encoder, "encoder_layers", d);
    compareMatrix(expected.value("encoder_last_hidden"), run.encoder.lastHidden,
                  "encoder_last_hidden", d);
    compareStack(expected.value("decoder_layers").toArray(), run.decoder, "decoder_layers", d);
    compareMatrix(expected.value("logits"), run.decoder.logits, "logits", d);
    return d;
}

// ---- Whole-model runs against each other (what-ifs, ablations) ----

// Every golden model in tests/data/models.
// Every golden model folder of tests/data/models (one with the reference's expected-ids-A.json):
// a family's goldens join every test that runs them by being there.
inline QStringList goldenModelNames() {
    QStringList names;
    const QDir models(QStringLiteral(AE_TEST_DATA_DIR) + "/models");
    for (const QString& name : models.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        if (QFileInfo::exists(models.filePath(name + "/expected-ids-A.json"))) names << name;
    }
    return names;
}
const QStringList kGoldenModels = goldenModelNames();

// One Qt Test row per golden model and each of its expected inputs (expected-ids-*.json), in the
// columns "name" and "expected", for goldenInput.
inline void addGoldenInputRows() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("expected");
    for (const QString& name : kGoldenModels) {
        const QStringList files =
            QDir(goldenModelDir(name)).entryList({"expected-ids-*.json"}, QDir::Files, QDir::Name);
        for (const QString& file : files)
            QTest::newRow(qPrintable(name + "/" + file)) << name << file;
    }
}

using MatrixR = model::Matrix<double>;

// |a − b| / (1 + |b|) at its largest; infinity when the shapes differ.

inline double worstRelative(const MatrixR& a, const MatrixR& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
    if (a.size() == 0) return 0;
    return ((a - b).array().abs() / (1.0 + b.array().abs())).maxCoeff();
}

// The worst relative difference of every matrix layer `l` records, a against b.
inline double layerDifference(const model::ModelRun<double>& a, const model::ModelRun<double>& b,
                              int l) {
    const auto& x = a.layers[static_cast<std::size_t>(l)];
    const auto& y = b.layers[static_cast<std::size_t>(l)];
    double worst = std::max({worstRelative(x.hiddenIn, y.hiddenIn), worstRelative(x.query, y.query),
                             worstRelative(x.key, y.key), worstRelative(x.value, y.value)});
    for (std::size_t h = 0; h < y.scores.size(); ++h) {
        worst = std::max(worst, worstRelative(x.scores[h], y.scores[h]));
        worst = std::max(worst, worstRelative(x.weights[h], y.weights[h]));
    }
    return worst;
}

// The logits (decoders) or the last hidden state (bert).
inline double finalDifference(const model::ModelRun<double>& a, const model::ModelRun<double>& b) {
    return a.config.isDecoder() ? worstRelative(a.logits, b.logits)
                                : worstRelative(a.lastHidden, b.lastHidden);
}

inline bool bitIdentical(const model::LayerRecord<double>& a, const model::LayerRecord<double>& b) {
    if (a.scores.size() != b.scores.size()) return false;
    for (std::size_t h = 0; h < a.scores.size(); ++h) {
        if (a.scores[h] != b.scores[h] || a.weights[h] != b.weights[h]) return false;
    }
    return a.hiddenIn == b.hiddenIn && a.query == b.query && a.key == b.key && a.value == b.value;
}

struct GoldenInput {
    std::vector<long long> ids;
    model::RunOptions options;
    std::vector<std::string> labels;
};

// A golden model's expected input `expectedFile` (empty: its first expected-ids-*.json): its ids
// and its options (attention mask, token types).
inline GoldenInput goldenInput(const QString& name, const QString& expectedFile = {}) {
    const QDir dir(goldenModelDir(name));
    const QStringList files = dir.entryList({"expected-ids-*.json"}, QDir::Files);
    GoldenInput input;
    if (files.isEmpty()) return input;
    const QJsonObject reference =
        readJsonFile(dir.filePath(expectedFile.isEmpty() ? files.front() : expectedFile));
    input.ids = jsonIds(reference.value("tokens").toArray());
    input.options = referenceOptions(reference);
    for (long long id : input.ids)
        input.labels.push_back(std::to_string(id));
    return input;
}

}  // namespace ae::testing
