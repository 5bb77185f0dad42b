#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer export (SCENE.json | --preset NAME) -o OUT [--format json|npy|csv]`: every
// stage of a scene, computed in double.
int exportCommand(const QStringList& arguments);
// `attention-explorer presets`: the built-in scenes, one `name<TAB>description` line each.
int presetsCommand(const QStringList& arguments);
}  // namespace ae::cli
