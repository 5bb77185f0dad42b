#include "io/model/sentence_embedding.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace ae::io {
namespace {

QJsonDocument readJson(const QString& path, QString* problem) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *problem = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return {};
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError)
        *problem = QStringLiteral("%1: not JSON (%2)").arg(path, error.errorString());
    return document;
}

// 1_Pooling/config.json's modes (sentence_transformers.models.Pooling), as words.
QString poolingWords(const QJsonObject& config) {
    QStringList modes;
    if (config.value("pooling_mode_mean_tokens").toBool())
        modes << QStringLiteral("the mean of the last hidden states over the tokens");
    if (config.value("pooling_mode_cls_token").toBool())
        modes << QStringLiteral("the last hidden state of the first token ([CLS])");
    if (config.value("pooling_mode_max_tokens").toBool())
        modes << QStringLiteral("the largest last hidden state over the tokens");
    if (config.value("pooling_mode_mean_sqrt_len_tokens").toBool())
        modes << QStringLiteral("the sum of the last hidden states over √(number of tokens)");
    if (config.value("pooling_mode_lasttoken").toBool())
        modes << QStringLiteral("the last token's last hidden state");
    return modes.join(QStringLiteral(" joined with "));
}

}  // namespace

QString sentenceEmbeddingNote(const QString& folder) {
    const QDir dir(folder);
    if (!QFile::exists(dir.filePath("modules.json"))) return {};
    QString problem;
    const QJsonDocument modules = readJson(dir.filePath("modules.json"), &problem);
    if (!problem.isEmpty()) return QStringLiteral("sentence-transformers: ") + problem;
    if (!modules.isArray())
        return QStringLiteral("sentence-transformers: %1: expected a list of modules")
            .arg(dir.filePath("modules.json"));
    QString pooling;
    bool normalized = false;
    for (const QJsonValue& value : modules.array()) {
        const QJsonObject module = value.toObject();
        const QString type = module.value("type").toString();
        if (type.endsWith(QLatin1String(".Normalize"))) normalized = true;
        if (!type.endsWith(QLatin1String(".Pooling"))) continue;
        const QString path = module.value("path").toString();
        const QJsonDocument config =
            readJson(dir.filePath(path + QStringLiteral("/config.json")), &problem);
        if (!problem.isEmpty()) return QStringLiteral("sentence-transformers: ") + problem;
        pooling = poolingWords(config.object());
    }
    if (pooling.isEmpty())
        return QStringLiteral("sentence-transformers: modules.json names no pooling this reads");
    return QStringLiteral(
               "sentence-transformers: the sentence embedding is %1%2; attention is the "
               "model's")
        .arg(pooling, normalized ? QStringLiteral(", then normalized to length 1") : QString());
}

}  // namespace ae::io
