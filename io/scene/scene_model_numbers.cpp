#include "io/scene/scene_model_numbers.h"

#include <QJsonArray>
#include <QJsonObject>
#include <cmath>

#include "io/scene/scene_json_values.h"

namespace ae::io::model_numbers {
namespace {

thread_local const Fields* tFields = nullptr;

const QString kMarker = QStringLiteral("from_model");
const QString kEdits = QStringLiteral("edits");

}  // namespace

FieldView viewOf(const MatrixD& m) {
    return FieldView(m.data(), m.rows(), m.cols());
}
FieldView viewOf(const VectorD& v) {
    return FieldView(v.data(), v.size(), 1);
}

QString scoreTermPath(const char* list, int head) {
    return QStringLiteral("score_terms.%1[%2]").arg(QLatin1String(list)).arg(head);
}

Fields fieldsOf(const Scene& s) {
    Fields fields;
    const auto put = [&fields](const char* path, const auto& numbers) {
        fields.emplace(QString::fromLatin1(path), viewOf(numbers));
    };
    put("embeddings", s.embeddings);
    if (s.norm.enabled) {
        put("norm.weight", s.norm.weight);
        if (s.norm.kind == NormKind::Layer) put("norm.bias", s.norm.bias);
    }
    const Projections& p = s.projections;
    if (p.mode != ProjectionMode::Identity) {
        put("projections.query", p.query);
        put("projections.value", p.value);
        put("projections.bias.query", p.queryBias);
        put("projections.bias.value", p.valueBias);
        if (p.mode == ProjectionMode::Separate) {
            put("projections.key", p.key);
            put("projections.bias.key", p.keyBias);
        }
    }
    if (p.hasOutput) {
        put("projections.output", p.output);
        put("projections.bias.output", p.outputBias);
    }
    if (s.qkNorm.enabled) {
        put("qk_norm.query_weight", s.qkNorm.queryWeight);
        put("qk_norm.key_weight", s.qkNorm.keyWeight);
    }
    for (std::size_t h = 0; h < s.scoreTerms.beforeScale.size(); ++h)
        fields.emplace(scoreTermPath("before_scale", static_cast<int>(h)),
                       viewOf(s.scoreTerms.beforeScale[h]));
    for (std::size_t h = 0; h < s.scoreTerms.afterScale.size(); ++h)
        fields.emplace(scoreTermPath("after_scale", static_cast<int>(h)),
                       viewOf(s.scoreTerms.afterScale[h]));
    return fields;
}

QJsonValue compactForm(const FieldView& m, const FieldView* model, bool isVector) {
    if (!model || model->rows() != m.rows() || model->cols() != m.cols() || m.size() == 0)
        return QJsonValue::Undefined;
    // Three numbers an edit against one a number: edits pay while fewer than a quarter differ.
    const Eigen::Index limit = m.size() / 4;
    QJsonArray edits;
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        for (Eigen::Index j = 0; j < m.cols(); ++j) {
            if (m(i, j) == (*model)(i, j)) continue;
            if (edits.size() >= limit) return QJsonValue::Undefined;
            edits.append(isVector
                             ? QJsonArray{static_cast<qint64>(i), m(i, j)}
                             : QJsonArray{static_cast<qint64>(i), static_cast<qint64>(j), m(i, j)});
        }
    }
    QJsonObject marker{{kMarker, true}};
    if (!edits.isEmpty()) marker[kEdits] = edits;
    return marker;
}

bool isMarker(const QJsonValue& value) {
    return value.isObject() && value.toObject().contains(kMarker);
}

MatrixD resolve(const QJsonValue& value, const QString& path, const Fields* model, bool isVector) {
    using scene_values::fail;
    using scene_values::index;
    const QJsonObject o = value.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (it.key() != kMarker && it.key() != kEdits)
            fail(path + "." + it.key(),
                 "unknown field (a model's numbers take from_model and edits)");
    }
    if (o.value(kMarker) != QJsonValue(true)) fail(path + ".from_model", "expected true");
    if (!model) {
        fail(path,
             "taken from the model the scene names (view.model): open the scene in the "
             "window, which opens that model with it");
    }
    const auto found = model->find(path);
    if (found == model->end()) fail(path, "the model's layer has no such numbers");
    MatrixD m = found->second;
    if (!o.contains(kEdits)) return m;
    if (!o.value(kEdits).isArray()) fail(path + ".edits", "expected a list");
    const QJsonArray edits = o.value(kEdits).toArray();
    const int width = isVector ? 2 : 3;
    for (qsizetype e = 0; e < edits.size(); ++e) {
        const QString at = index(path + ".edits", e);
        const QJsonArray edit = edits[e].toArray();
        if (!edits[e].isArray() || edit.size() != width) {
            fail(at, isVector ? QStringLiteral("expected [index, value]")
                              : QStringLiteral("expected [row, column, value]"));
        }
        const auto row = scene_values::integer(edit[0], index(at, 0), 0).approx;
        const auto col = isVector ? 0.0 : scene_values::integer(edit[1], index(at, 1), 0).approx;
        if (row >= static_cast<double>(m.rows()) || col >= static_cast<double>(m.cols())) {
            fail(at, isVector ? QStringLiteral("index %1 outside the model's %2 values")
                                    .arg(row, 0, 'f', 0)
                                    .arg(m.rows())
                              : QStringLiteral("entry (%1, %2) outside the model's %3x%4")
                                    .arg(row, 0, 'f', 0)
                                    .arg(col, 0, 'f', 0)
                                    .arg(m.rows())
                                    .arg(m.cols()));
        }
        m(static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(col)) =
            scene_values::number(edit[width - 1], index(at, width - 1));
    }
    return m;
}

Scope::Scope(const Fields* fields) : previous_(tFields) {
    tFields = fields;
}
Scope::~Scope() {
    tFields = previous_;
}
const Fields* Scope::current() {
    return tFields;
}

}  // namespace ae::io::model_numbers
