#pragma once
// Scene files, format versions 1 and 2: strict reading, writing, and the built-in presets.
// Reading follows the reference semantics exactly, including the order of its checks, so a bad
// scene gets the same `field.path: problem` message here as there.

#include <QByteArray>
#include <QList>
#include <QString>

#include "core/scene.h"
#include "core/scene_error.h"

namespace ae::io {

// Parses and validates a scene and draws its `init` numbers. Throws SceneError.
Scene parseScene(const QByteArray& json);

// Reads a file and parses it. File-level problems (missing, unreadable, not JSON) are thrown as
// SceneError with an empty path and a problem such as "cannot open: No such file or directory".
Scene loadSceneFile(const QString& fileName);

// The scene as JSON: format version 1, or 2 when it uses a version 2 field (an RMSNorm, kv heads,
// a q/k norm, rotary positions). Matrices drawn by `init` are written as that `init` (which draws
// them again, bit for bit); every other matrix explicitly.
QByteArray sceneToJson(const Scene& scene);

// A scene made from a model's layer is saved without the model's numbers. `modelLayer`
// is that layer as the model gives it (the same shapes): every matrix and vector of `scene` equal
// to its counterpart is written as {"from_model": true}, one that differs in a few entries as
// that marker with "edits": [[row, column, value], ...] ([[index, value], ...] for a vector), any
// other explicitly. docs/scene-format.md, "Scenes made from a model".
QByteArray sceneToJson(const Scene& scene, const Scene& modelLayer);
// Either of the above (modelLayer null: the first) with `viewJson` in place of scene.viewJson:
// saving adds the window's state without copying the scene.
QByteArray sceneToJson(const Scene& scene, const Scene* modelLayer, const std::string& viewJson);
// Whether `json` takes numbers from its model (has such a marker): then only
// parseScene(json, modelLayer) reads it, with the layer as the model gives it.
bool takesNumbersFromModel(const QByteArray& json);
Scene parseScene(const QByteArray& json, const Scene& modelLayer);

struct PresetInfo {
    QString name;
    QString description;
};
// The built-in scenes, in a fixed order.
QList<PresetInfo> presets();
// Throws SceneError("preset", "unknown preset NAME (...)") for a name not in presets().
Scene loadPreset(const QString& name);
QByteArray presetJson(const QString& name);

// The largest number of elements one drawn matrix may have (about 2 GiB of doubles).
constexpr long long kMaxDrawnElements = 1LL << 28;

}  // namespace ae::io
