#include "cli/render_command.h"

#include <QCommandLineParser>
#include <QFont>
#include <QGuiApplication>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "cli/command_support.h"
#include "cli/model_render_command.h"
#include "io/formats/result_export.h"
#include "io/scene/scene_file.h"
#include "plot/color_maps.h"
#include "plot/image_export.h"

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
    if (isModelRender(arguments)) return renderModelCommand(arguments);
    QCommandLineParser parser;
    parser.setApplicationDescription("Draw a scene's heatmaps into an image, as the window does.");
    parser.addHelpOption();
    addSceneArguments(parser);
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
    parser.addOption(
        {"title", "none (no titles), or one title (default: each map's own).", "text"});
    parser.addOption({"no-entropy", "Leave out the weights' row-entropy strip."});
    parser.addOption({"value-weighted",
                      "The weights value-weighted: each row the share of what the head moves that "
                      "comes from each key, alpha*|v*W_O| normalised (with --stage weights)."});
    parser.addOption({"colorbar-label", "Text beside the colour bars.", "text"});
    parser.addOption({"range",
                      "auto (each map's own, default), shared (one for all maps drawn) or "
                      "MIN:MAX.",
                      "range", "auto"});
    parser.addOption(
        {"decimals", "Digits after the point in every cell, 0 to 6, or auto.", "n", "auto"});
    parser.addOption({"size",
                      "column (3.5 in wide) or page (7 in): the print width, text kept legible "
                      "(default for PDF without --width or --height: column).",
                      "width"});
    if (!parser.parse(arguments)) refuse("render: " + parser.errorText());
    if (parser.isSet("help")) {
        std::fputs((parser.helpText() + '\n').toLocal8Bit().constData(), stdout);
        return kSuccess;
    }

    if (!parser.isSet("output")) refuse("render: -o OUT.(png|jpg|pdf|svg) is required");
    const QString output = parser.value("output");
    const std::optional<plot::ImageFormat> format = plot::imageFormatForFile(output);
    if (!format) refuse("render: -o: expected a .png, .jpg, .pdf or .svg file, got " + output);

    plot::RenderRequest request;
    const std::optional<Stage> stage = plot::stageFromKey(parser.value("stage"));
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
        request.colorMap = plot::colorMapFromName(parser.value("colormap"));
        if (!request.colorMap) {
            refuse("render: --colormap: expected " + plot::colorMapNames().join(", ") + ", got " +
                   parser.value("colormap"));
        }
    }
    request.showValues = parser.isSet("values");
    request.showEntropy = !parser.isSet("no-entropy");
    request.valueWeighted = parser.isSet("value-weighted");
    if (request.valueWeighted && request.stage != Stage::Weights)
        refuse(
            "render: --value-weighted: only the weights are value-weighted (--stage weights), "
            "got --stage " +
            parser.value("stage"));
    plot::FigureStyle& style = request.image.style;
    if (parser.isSet("title")) {
        const QString title = parser.value("title");
        if (title.trimmed().isEmpty())
            refuse("render: --title: expected none or a title, got an empty text");
        style.title = title == QLatin1String("none") ? QString() : title;
    }
    style.colorBarLabel = parser.value("colorbar-label");
    const QString range = parser.value("range");
    const std::optional<plot::ColorRange> colorRange = plot::parseColorRange(range);
    if (!colorRange) {
        const QStringList ends = range.split(QLatin1Char(':'));
        bool lowOk = false, highOk = false;
        if (ends.size() == 2) {
            const double low = ends[0].toDouble(&lowOk), high = ends[1].toDouble(&highOk);
            lowOk = lowOk && std::isfinite(low);
            highOk = highOk && std::isfinite(high);
        }
        refuse(
            lowOk && highOk
                ? QStringLiteral("render: --range: expected MIN below MAX, got \"%1\"").arg(range)
                : QStringLiteral("render: --range: expected auto, shared or MIN:MAX, got \"%1\"")
                      .arg(range));
    }
    style.range = *colorRange;
    if (parser.value("decimals") != QLatin1String("auto")) {
        bool decimalsOk = false;
        style.decimals = parser.value("decimals").toInt(&decimalsOk);
        if (!decimalsOk || style.decimals < 0 || style.decimals > 6) {
            refuse(QStringLiteral("render: --decimals: expected 0 to 6 or auto, got \"%1\"")
                       .arg(parser.value("decimals")));
        }
    }
    std::optional<plot::PaperWidth> paper;
    if (parser.isSet("size")) {
        if (parser.value("size") == QLatin1String("column")) {
            paper = plot::PaperWidth::Column;
        } else if (parser.value("size") == QLatin1String("page")) {
            paper = plot::PaperWidth::Page;
        } else {
            refuse(QStringLiteral("render: --size: expected column or page, got \"%1\"")
                       .arg(parser.value("size")));
        }
    }
    bool ok = false;
    request.image.scale = parser.value("scale").toDouble(&ok);
    if (!ok || !std::isfinite(request.image.scale) || request.image.scale < 0.1 ||
        request.image.scale > 10) {
        refuse("render: --scale: expected a number from 0.1 to 10, got " + parser.value("scale"));
    }
    const bool hasWidth = parser.isSet("width"), hasHeight = parser.isSet("height");
    const int width = hasWidth ? sideArgument(parser, "width") : 0;
    const int height = hasHeight ? sideArgument(parser, "height") : 0;
    if (paper && (hasWidth || hasHeight))
        refuse("render: --size: give --size or --width/--height, not both");
    // A PDF goes into a paper: without a size it fits a column.
    if (!paper && !hasWidth && !hasHeight && *format == plot::ImageFormat::Pdf)
        paper = plot::PaperWidth::Column;

    QString label;
    const Scene scene = readSceneArgument(parser, "render", label);

    // Without a size the maps get their natural room; one side given keeps that shape.
    const bool perHead = plot::isPerHead(request.stage) && !request.head;
    int tiles = perHead ? std::min(scene.heads, plot::HeatmapGrid::kMaxTiles) : 1;
    if (perHead && request.stage == Stage::Weights && scene.heads > 1) ++tiles;
    if (paper) {
        plot::fitToPaper(request.image, tiles, *paper);
    } else if (hasWidth || hasHeight) {
        const QSize natural = plot::naturalImageSize(tiles);
        request.image.size =
            QSize(hasWidth ? width : qRound(height * double(natural.width()) / natural.height()),
                  hasHeight ? height : qRound(width * double(natural.height()) / natural.width()));
    }
    const bool raster = *format == plot::ImageFormat::Png || *format == plot::ImageFormat::Jpg;
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
        bytes = plot::renderScene(scene, request, *format);
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
