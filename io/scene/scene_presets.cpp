#include "io/scene/scene_file.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace ae::io {

namespace {
// Built-in scenes: resources/presets/NAME.scene.json, compiled in. The order is the gallery's.
const char* const kPresetNames[] = {
    "default",    "journey", "four-words", "journey-causal", "tutorial-variant", "bert-base",
    "gpt2-style", "cross",   "identity",   "shared-qk",      "cross-sentences",  "why-scale"};
}  // namespace

QList<PresetInfo> presets() {
    QList<PresetInfo> list;
    for (const char* name : kPresetNames) {
        // Only the title: parsing would draw every init matrix.
        const QJsonObject scene =
            QJsonDocument::fromJson(presetJson(QString::fromLatin1(name))).object();
        list.append({QString::fromLatin1(name), scene["title"].toString()});
    }
    return list;
}

QByteArray presetJson(const QString& name) {
    QFile file(":/presets/" + name + ".scene.json");
    if (!file.open(QIODevice::ReadOnly)) {
        QStringList names;
        for (const char* n : kPresetNames)
            names << QString::fromLatin1(n);
        throw SceneError("preset", QStringLiteral("unknown preset %1 (known: %2)")
                                       .arg(name, names.join(", "))
                                       .toStdString());
    }
    return file.readAll();
}

Scene loadPreset(const QString& name) {
    return parseScene(presetJson(name));
}

}  // namespace ae::io
