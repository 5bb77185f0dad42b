#pragma once
// The status bar's words for the figures a scene and its model give (the document and the session
// hand numbers; the window words them).

#include <QString>
#include <QStringList>

#include "core/scene.h"

namespace ae::model {
struct Model;
}

namespace ae::ui {

// The status line's KV-cache figures (core/key_value_heads.h): the layer's per token at its
// current kv heads, in the window's float32 ("KV cache 2 × 2 kv heads × 16 = 64
// numbers/token/layer (256 B at float32)"), and with `model` (the one the layer came from) that
// model's at its real size: every layer, its own kv heads, its stored dtype ("; Llama-3.2-1B:
// 32 KiB/token"), named by its folder.
// `brief`: the layer's figure in bytes alone ("KV cache 256 B/token/layer; …"), for a status bar
// that must fit beside the other figures at 922 pixels (the tooltip has the whole).
QString keyValueCacheStatus(const Scene& scene, const model::Model* model = nullptr,
                            const QString& modelFolder = {}, bool brief = false);

// What the open layer does beyond the plain recipe, one line each, for the controls: its
// positions and its soft-cap. Positions come from the scene's rotation (which dimensions of a
// head turn: all, or a partial rotation's leading ones) or, for a layer of `model` (layer
// `layer`) with none of its own, from the family: learned or fixed positions already added to
// the tokens before layer 0, or, in a rotary model, a layer left without rotary positions
// (SmolLM3's NoPE layers).
// The status bar's word on how the model's run keeps its maps: every head's map kept, or (the
// run needing more than `budget` bytes with them, `needed`) only what the model view draws, each
// layer's maps recomputed when a view asks. `brief`: the label; else the tooltip's sentences.
QString mapMemoryStatus(bool keepsOnlyDigests, double needed, double budget, bool brief);

QStringList layerFeatureLines(const Scene& scene, const model::Model* model = nullptr,
                              int layer = -1);

}  // namespace ae::ui
