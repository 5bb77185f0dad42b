#include "cli/command_support.h"

#include <QCommandLineParser>
#include <algorithm>
#include <stdexcept>

#include "core/key_value_heads.h"
#include "core/model/model.h"
#include "core/scene_error.h"
#include "io/model/builtin_models.h"
#include "io/scene/scene_file.h"

namespace ae::cli {

void printLine(FILE* stream, const QString& text) {
    std::fputs(text.toLocal8Bit().constData(), stream);
    std::fputc('\n', stream);
}

void refuse(const QString& message) {
    throw std::invalid_argument(message.toStdString());
}

void addSceneArguments(QCommandLineParser& parser) {
    parser.addPositionalArgument("scene", "The scene file (format attention-explorer/scene).");
    parser.addOption({"preset", "A built-in scene instead of a file.", "name"});
    parser.addOption({"kv-heads",
                      "Share K and V across groups of heads: N kv heads, a divisor of the head "
                      "count, each the mean of its group's K and V columns.",
                      "n"});
}

Scene readSceneArgument(const QCommandLineParser& parser, const QString& command, QString& label) {
    const QStringList positional = parser.positionalArguments();
    const bool hasPreset = parser.isSet("preset");
    if (hasPreset == !positional.isEmpty() || positional.size() > 1)
        refuse(command + ": give one SCENE.json or --preset NAME");
    label = hasPreset ? "preset " + parser.value("preset") : positional.first();
    Scene scene;
    try {
        scene = hasPreset ? io::loadPreset(parser.value("preset"))
                          : io::loadSceneFile(positional.first());
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }
    if (parser.isSet("kv-heads")) {
        // The window's kv heads slider, from the command line: the scene's K and V as a
        // multi-head source, pooled per group (core/key_value_heads.h).
        bool ok = false;
        const int kvHeads = parser.value("kv-heads").toInt(&ok);
        const std::vector<int> choices = keyValueHeadChoices(scene.heads);
        if (!ok || std::find(choices.begin(), choices.end(), kvHeads) == choices.end()) {
            QStringList listed;
            for (int c : choices)
                listed << QString::number(c);
            refuse(QStringLiteral("%1: --kv-heads %2: expected a divisor of the %3 heads (%4)")
                       .arg(label, parser.value("kv-heads"))
                       .arg(scene.heads)
                       .arg(listed.join(", ")));
        }
        try {
            setKeyValueHeads(scene, keyValueSource(scene), scene.heads, kvHeads);
        } catch (const SceneError& error) {
            refuse(label + ": --kv-heads: " + QString::fromStdString(error.what()));
        }
    }
    return scene;
}

QString modelFolderArgument(const QString& argument, const QString& command) {
    try {
        return io::resolveModelArgument(argument);
    } catch (const model::ModelError& error) {
        refuse(command + ": " + QString::fromStdString(error.what()));
    }
}

}  // namespace ae::cli
