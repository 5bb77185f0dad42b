#pragma once
#include <QStringList>

namespace ae::cli {
// `attention-explorer render (SCENE.json | --preset NAME) -o OUT.(png|jpg|pdf|svg) [--stage S]
// [--head N|all] [--width W] [--height H] [--scale S] [--colormap NAME] [--values]`: draws the
// maps the window would draw, with no display. Throws std::invalid_argument (one line, exit
// status 2) for bad arguments, scenes or files. Needs a QApplication on any platform (offscreen).
int renderCommand(const QStringList& arguments);
}  // namespace ae::cli
