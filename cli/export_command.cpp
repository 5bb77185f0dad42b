#include "cli/export_command.h"

#include <QCommandLineParser>

#include "cli/command_support.h"
#include "core/attention_engine.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"

namespace ae::cli {
namespace {}  // namespace

int presetsCommand(const QStringList& arguments) {
    if (arguments.size() > 1) refuse("presets: takes no arguments");
    for (const io::PresetInfo& preset : io::presets()) {
        printLine(stdout, preset.name + '\t' + preset.description);
    }
    return kSuccess;
}

int exportCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription("Compute every stage of a scene and write the result.");
    parser.addHelpOption();
    addSceneArguments(parser);
    parser.addOption({{"o", "output"}, "Result file (json) or directory (npy, csv).", "out"});
    parser.addOption({"format", "json (default), npy or csv.", "format", "json"});
    if (!parser.parse(arguments)) refuse("export: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QString format = parser.value("format");
    if (format != "json" && format != "npy" && format != "csv") {
        refuse("export: --format: expected json, npy or csv, got " + format);
    }
    if (!parser.isSet("output")) refuse("export: -o OUT is required");
    QString label;
    const Scene scene = readSceneArgument(parser, "export", label);
    AttentionEngine<double> engine;
    try {
        // The result's text takes ~24 bytes a number on top of the engine's 8 (npy: a copy).
        checkFitsInMemory(scene, sizeof(double), format == "npy" ? 8.0 : 24.0);
        engine.setScene(scene);
        engine.compute();
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }
    const QString output = parser.value("output");
    try {
        if (format == "json") {
            io::writeFileAtomically(output, io::resultJson(engine));
        } else {
            io::writeMatrixDirectory(
                engine, output, format == "npy" ? io::MatrixFormat::Npy : io::MatrixFormat::Csv);
        }
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
