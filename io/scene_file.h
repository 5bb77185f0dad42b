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
