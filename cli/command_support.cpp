#include "cli/command_support.h"

#include <QCommandLineParser>
#include <stdexcept>

#include "core/model.h"
#include "core/scene_error.h"
#include "io/builtin_models.h"
#include "io/scene_file.h"

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
}

Scene readSceneArgument(const QCommandLineParser& parser, const QString& command, QString& label) {
    const QStringList positional = parser.positionalArguments();
    const bool hasPreset = parser.isSet("preset");
    if (hasPreset == !positional.isEmpty() || positional.size() > 1)
        refuse(command + ": give one SCENE.json or --preset NAME");
    label = hasPreset ? "preset " + parser.value("preset") : positional.first();
    try {
        return hasPreset ? io::loadPreset(parser.value("preset"))
                         : io::loadSceneFile(positional.first());
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }
}

QString modelFolderArgument(const QString& argument, const QString& command) {
    try {
        return io::resolveModelArgument(argument);
    } catch (const model::ModelError& error) {
        refuse(command + ": " + QString::fromStdString(error.what()));
    }
}

}  // namespace ae::cli
