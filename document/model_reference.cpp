#include "document/model_reference.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdint>

#include "core/model/model.h"

namespace ae::document {

namespace {

const QLatin1String kModelKey("model");

QJsonObject viewObject(const std::string& viewJson) {
    return QJsonDocument::fromJson(QByteArray::fromStdString(viewJson)).object();
}

std::string viewText(const QJsonObject& view) {
    return QJsonDocument(view).toJson(QJsonDocument::Compact).toStdString();
}

// Whether `folder` is near enough to `sceneDir` to be written relative to it: they share a
// folder below the file system's root, and the path needs at most two "../" (a model folder
// beside the scenes' folder moves with them; one across the file system stays absolute).
bool nearEnough(const QString& sceneDir, const QString& folder, const QString& relative) {
    const QString first = sceneDir.section(QLatin1Char('/'), 1, 1);
    if (first.isEmpty() || first != folder.section(QLatin1Char('/'), 1, 1)) return false;
    return !relative.startsWith(QLatin1String("../../../")) &&
           relative != QLatin1String("../../..");
}

}  // namespace

std::optional<ModelReference> modelReference(const std::string& viewJson) {
    if (viewJson.empty()) return std::nullopt;
    const QJsonValue value = viewObject(viewJson).value(kModelKey);
    if (!value.isObject()) return std::nullopt;
    const QJsonObject o = value.toObject();
    if (!o[QLatin1String("folder")].isString() && !o[QLatin1String("builtin")].isString())
        return std::nullopt;
    ModelReference r;
    r.folder = o[QLatin1String("folder")].toString();
    r.builtIn = o[QLatin1String("builtin")].toString();
    r.fingerprint = o[QLatin1String("fingerprint")].toString();
    r.text = o[QLatin1String("text")].toString();
    for (const QJsonValue id : o[QLatin1String("ids")].toArray())
        r.ids.push_back(static_cast<long long>(id.toDouble()));
    for (const QJsonValue m : o[QLatin1String("attention_mask")].toArray())
        r.attentionMask.push_back(m.toInt());
    r.textPair = o[QLatin1String("text_pair")].toString();
    for (const QJsonValue t : o[QLatin1String("token_types")].toArray())
        r.tokenTypes.push_back(t.toInt());
    r.pairStart = o[QLatin1String("pair_start")].toInt(-1);
    r.layer = o[QLatin1String("layer")].toInt();
    r.head = o[QLatin1String("head")].toInt();
    return r;
}

std::string withModelReference(const std::string& viewJson, const ModelReference& r) {
    QJsonObject view = viewObject(viewJson);
    QJsonObject o;
    if (!r.builtIn.isEmpty()) o[QLatin1String("builtin")] = r.builtIn;
    if (r.builtIn.isEmpty() || !r.folder.isEmpty()) o[QLatin1String("folder")] = r.folder;
    o[QLatin1String("fingerprint")] = r.fingerprint;
    o[QLatin1String("text")] = r.text;
    QJsonArray ids, mask;
    for (long long id : r.ids)
        ids.append(static_cast<double>(id));
    for (int m : r.attentionMask)
        mask.append(m);
    o[QLatin1String("ids")] = ids;
    if (!r.attentionMask.empty()) o[QLatin1String("attention_mask")] = mask;
    if (!r.textPair.isEmpty()) o[QLatin1String("text_pair")] = r.textPair;
    if (!r.tokenTypes.empty()) {
        QJsonArray types;
        for (int t : r.tokenTypes)
            types.append(t);
        o[QLatin1String("token_types")] = types;
    }
    if (r.pairStart >= 0) o[QLatin1String("pair_start")] = r.pairStart;
    o[QLatin1String("layer")] = r.layer;
    o[QLatin1String("head")] = r.head;
    view[kModelKey] = o;
    return viewText(view);
}

std::string withFolderRelativeTo(const std::string& viewJson, const QString& sceneFile) {
    std::optional<ModelReference> r = modelReference(viewJson);
    if (!r) return viewJson;
    if (!r->builtIn.isEmpty()) {
        // Where this machine keeps its built-in models is no business of the file.
        if (r->folder.isEmpty()) return viewJson;
        r->folder.clear();
        return withModelReference(viewJson, *r);
    }
    if (QDir::isRelativePath(r->folder)) return viewJson;
    const QString sceneDir = QFileInfo(sceneFile).absolutePath();
    const QString folder = QDir::cleanPath(r->folder);
    const QString relative = QDir(sceneDir).relativeFilePath(folder);
    if (QDir::isAbsolutePath(relative) || !nearEnough(sceneDir, folder, relative)) return viewJson;
    r->folder = relative.isEmpty() ? QStringLiteral(".") : relative;
    return withModelReference(viewJson, *r);
}

std::string withFolderResolvedFrom(const std::string& viewJson, const QString& sceneFile) {
    std::optional<ModelReference> r = modelReference(viewJson);
    if (!r || !r->builtIn.isEmpty() || QDir::isAbsolutePath(r->folder)) return viewJson;
    r->folder = QDir::cleanPath(QFileInfo(sceneFile).absoluteDir().absoluteFilePath(r->folder));
    return withModelReference(viewJson, *r);
}

QString modelFingerprint(const model::Model& m) {
    const model::Config& c = m.config;
    model::ModelWeights weights = m.weights;  // tensorSpecs points its slots into this copy
    std::uint32_t hash = 2166136261u;         // FNV-1a over names, dtypes and shapes
    const auto mix = [&hash](const std::string& text) {
        for (unsigned char ch : text) {
            hash ^= ch;
            hash *= 16777619u;
        }
    };
    for (const model::TensorSpec& spec : model::tensorSpecs(c, weights)) {
        const model::TensorRef& t = *spec.slot;
        mix(t.name + ' ' + std::to_string(static_cast<int>(t.dtype)) + ' ' +
            std::to_string(t.rows) + 'x' + std::to_string(t.cols) + ';');
    }
    return QStringLiteral("%1 L%2 H%3/%4 d%5 hd%6 V%7 I%8 #%9")
        .arg(QLatin1String(model::familyName(c.family)))
        .arg(c.layers)
        .arg(c.heads)
        .arg(c.kvHeads)
        .arg(c.hidden)
        .arg(c.headDim)
        .arg(c.vocab)
        .arg(c.intermediate)
        .arg(hash, 8, 16, QLatin1Char('0'));
}

}  // namespace ae::document
