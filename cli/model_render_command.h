#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer render MODEL_DIR (--text T | --ids 1,2,3) --view model|head|rollout|qk
// [--layer L] [--head H] [--position P] [--qk separate|joint|norms] [--width W] [--height H]
// [--scale S] [--presentation] -o OUT.(png|jpg|pdf|svg)`: draws the model view (or one layer's
// maps, --view head) as the window draws it, with no display. Exit status 2 with one line for
// anything refused. renderCommand hands it every `render` whose first argument is a folder or
// that has --view.
int renderModelCommand(const QStringList& arguments);
// Whether `render`'s arguments ask for a model view (a --view option, or a folder first).
bool isModelRender(const QStringList& arguments);
}  // namespace ae::cli
