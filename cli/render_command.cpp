#include "render_command.h"

#include <QCommandLineParser>
#include <QFont>
#include <QGuiApplication>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "color_maps.h"
#include "command_line.h"
#include "image_export.h"
#include "result_export.h"
#include "scene_file.h"

namespace ae::cli {
namespace {

// Large enough for a poster, small enough that a typo cannot ask for gigabytes.
constexpr int kMaxSide = 20000;
constexpr double kMaxPixels = 200e6;

int sideArgument(const QCommandLineParser& parser, const QString& name) {
    bool ok = false;
    const int value = parser.value(name).toInt(&ok);
    if (!ok || value < 16 || value > kMaxSide) {
        refuse(QStringLiteral("render: --%1: expected an integer from 16 to %2, got %3")
                   .arg(name)
                   .arg(kMaxSide)
                   .arg(parser.value(name)));
    }
    return value;
}

}  // namespace

int renderCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription("Draw a scene's heatmaps into an image, as the window does.");
    parser.addHelpOption();
    parser.addPositionalArgument("scene", "The scene file (format attention-explorer/scene v1).");
    parser.addOption({"preset", "A built-in scene instead of a file.", "name"});
    parser.addOption({{"o", "output"}, "The image: .png, .jpg, .pdf or .svg.", "out"});
    parser.addOption({"stage", QString::fromStdString(stageKeyList()) + " (default: weights).",
                      "stage", "weights"});
    parser.addOption(
        {"head", "A head from 0, or all (default: every head, and their mean).", "n", "all"});
    parser.addOption({"width", "Width in pixels (default: room for the maps).", "w"});
    parser.addOption({"height", "Height in pixels.", "h"});
    parser.addOption({"scale", "Pixels per pixel for print, text included (default 1).", "s", "1"});
    parser.addOption({"colormap", "viridis, cividis, magma, gray or rdbu.", "name"});
    parser.addOption({"values", "Numbers in cells that have room for them."});
    if (!parser.parse(arguments)) refuse("render: " + parser.errorText());
    if (parser.isSet("help")) {
        std::fputs((parser.helpText() + '\n').toLocal8Bit().constData(), stdout);
        return kSuccess;
    }

    if (!parser.isSet("output")) refuse("render: -o OUT.(png|jpg|pdf|svg) is required");
    const QString output = parser.value("output");
    const std::optional<ui::ImageFormat> format = ui::imageFormatForFile(output);
    if (!format) refuse("render: -o: expected a .png, .jpg, .pdf or .svg file, got " + output);

    ui::RenderRequest request;
    const std::optional<ui::Stage> stage = ui::stageFromKey(parser.value("stage"));
    if (!stage) {
        refuse(QStringLiteral("render: --stage: expected %1, got %2")
                   .arg(QString::fromStdString(stageKeyList()), parser.value("stage")));
    }
    request.stage = *stage;
    if (parser.value("head") != QLatin1String("all")) {
        bool ok = false;
        request.head = parser.value("head").toInt(&ok);
        if (!ok || *request.head < 0)
            refuse("render: --head: expected a head number from 0 or all, got " +
                   parser.value("head"));
    }
    if (parser.isSet("colormap")) {
        request.colorMap = ui::colorMapFromName(parser.value("colormap"));
        if (!request.colorMap) {
            refuse("render: --colormap: expected " + ui::colorMapNames().join(", ") + ", got " +
                   parser.value("colormap"));
        }
    }
    request.showValues = parser.isSet("values");
    bool ok = false;
    request.image.scale = parser.value("scale").toDouble(&ok);
    if (!ok || !std::isfinite(request.image.scale) || request.image.scale < 0.1 ||
        request.image.scale > 10) {
        refuse("render: --scale: expected a number from 0.1 to 10, got " + parser.value("scale"));
    }
    const bool hasWidth = parser.isSet("width"), hasHeight = parser.isSet("height");
    const int width = hasWidth ? sideArgument(parser, "width") : 0;
    const int height = hasHeight ? sideArgument(parser, "height") : 0;

    const QStringList positional = parser.positionalArguments();
    const bool hasPreset = parser.isSet("preset");
    if (hasPreset == !positional.isEmpty() || positional.size() > 1)
        refuse("render: give one SCENE.json or --preset NAME");
    const QString label = hasPreset ? "preset " + parser.value("preset") : positional.first();
    Scene scene;
    try {
        scene = hasPreset ? io::loadPreset(parser.value("preset"))
                          : io::loadSceneFile(positional.first());
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }

    // Without a size the maps get their natural room; one side given keeps that shape.
    if (hasWidth || hasHeight) {
        const bool perHead = ui::isPerHead(request.stage) && !request.head;
        int tiles = perHead ? std::min(scene.heads, ui::HeatmapGrid::kMaxTiles) : 1;
        if (perHead && request.stage == ui::Stage::Weights && scene.heads > 1) ++tiles;
        const QSize natural = ui::naturalImageSize(tiles);
        request.image.size =
            QSize(hasWidth ? width : qRound(height * double(natural.width()) / natural.height()),
                  hasHeight ? height : qRound(width * double(natural.height()) / natural.width()));
    }
    const bool raster = *format == ui::ImageFormat::Png || *format == ui::ImageFormat::Jpg;
    const QSize size = request.image.size;
    if (raster && !size.isEmpty() &&
        size.width() * request.image.scale * size.height() * request.image.scale > kMaxPixels) {
        refuse(QStringLiteral("render: %1x%2 at --scale %3 is more than %4 million pixels")
                   .arg(size.width())
                   .arg(size.height())
                   .arg(request.image.scale)
                   .arg(kMaxPixels / 1e6));
    }

    // The window's rule (windowBytes: its engines and scene copies), plus the image: 4 bytes a
    // pixel.
    const double pixels = raster && !size.isEmpty() ? size.width() * request.image.scale *
                                                          size.height() * request.image.scale
                                                    : 0.0;
    try {
        checkFitsInMemory(windowBytes(scene) + 4.0 * pixels,
                          "the window's engines and scenes, and the image");
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }

    QByteArray bytes;
    try {
        bytes = ui::renderScene(scene, request, *format);
    } catch (const std::invalid_argument& error) {
        refuse(label + ": " + error.what());
    } catch (const io::WriteError& error) {
        refuse(output + ": cannot write: " + error.what());
    }
    try {
        io::writeFileAtomically(output, bytes);
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
