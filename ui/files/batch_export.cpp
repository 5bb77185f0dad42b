#include "ui/files/batch_export.h"

#include <gif_lib.h>

#include <QBuffer>
#include <QDir>
#include <QTextStream>
#include <cmath>
#include <stdexcept>

#include "core/model/head_scores.h"
#include "core/model/layer_mask.h"
#include "document/attention_document.h"
#include "document/model_session.h"
#include "io/formats/result_export.h"
#include "plot/cell_explanation.h"
#include "plot/heatmap_controller.h"
#include "plot/heatmap_grid.h"
#include "plot/model_view_export.h"
#include "ui/window/document_maps.h"

namespace ae::ui {
namespace {

QString parameterName(SweepParameter parameter) {
    switch (parameter) {
        case SweepParameter::Divisor:
            return QStringLiteral("divisor");
        case SweepParameter::Heads:
            return QStringLiteral("heads");
        case SweepParameter::Window:
            break;
    }
    return QStringLiteral("window");
}

// Applies one value to the private document; the caption says what the frame shows.
QString applySweepValue(document::AttentionDocument& document, SweepParameter parameter,
                        double value) {
    const Scene& scene = document.scene();
    switch (parameter) {
        case SweepParameter::Divisor:
            document.setScaleWithoutUndo({ScaleKind::Divisor, value});
            return QStringLiteral("scores ÷ %1").arg(value, 0, 'g', 3);
        case SweepParameter::Heads: {
            const int heads = static_cast<int>(value);
            document.setHeadsWithoutUndo(heads);
            return QStringLiteral("%1 head%2 of width %3")
                .arg(heads)
                .arg(heads == 1 ? "" : "s")
                .arg(scene.dProj() / heads);
        }
        case SweepParameter::Window: {
            Mask mask = scene.mask;
            mask.window = static_cast<int>(value);
            document.setMaskWithoutUndo(mask);
            return QStringLiteral("window ±%1").arg(static_cast<int>(value));
        }
    }
    return {};
}

int appendBytes(GifFileType* gif, const GifByteType* data, int length) {
    static_cast<QByteArray*>(gif->UserData)->append(reinterpret_cast<const char*>(data), length);
    return length;
}

[[noreturn]] void gifFailed(int code) {
    throw io::WriteError(
        QStringLiteral("GIF: %1").arg(QString::fromLatin1(GifErrorString(code))).toStdString());
}

// One head's T x T weights as the grid draws a weight map: viridis on 0 to 1, tokens on both axes,
// hidden keys hatched and each row's entropy (bits) in a strip.
void showModelHead(plot::HeatmapController& map, const plot::ModelViewData& data, int layer,
                   int head, const plot::EngineF::Matrix& weights) {
    const ae::model::ModelRun<float>& run = *data.run;
    const int count = static_cast<int>(weights.rows());
    QStringList labels;
    for (int i = 0; i < count; ++i)
        labels << (i < data.tokens.size() ? data.tokens[i] : QString::number(i));
    const Mask mask = model::layerMask(run.config, layer, run.attentionMask);
    const BoolMatrix allowed = allowedMatrix(mask, count, count);
    std::vector<double> entropyBits(static_cast<size_t>(count), 0.0);
    for (int i = 0; i < count; ++i) {
        for (int j = 0; j < count; ++j) {
            const double w = weights(i, j);
            if (w > 0.0) entropyBits[static_cast<size_t>(i)] -= w * std::log2(w);
        }
    }
    map.setTitle(QObject::tr("layer %1, head %2").arg(layer).arg(head));
    map.setAxisTitles(QObject::tr("query"), QObject::tr("key"));
    map.setLabels(labels, labels, true);
    map.setGradient(plot::ColorMap::Viridis);
    map.setShowValues(false);
    map.setMatrix(weights);
    map.setAllowed(allowed, plot::slidingWindowCells(mask, count, count));
    map.setDataRange(0.0, 1.0);
    map.setRowEntropy(entropyBits, std::log2(std::max(2, count)));
    map.replot();
}

QString csvNumber(double value) {
    return std::isfinite(value) ? QString::number(value, 'g', 17) : QString();
}

}  // namespace

QStringList exportEveryModelHead(const plot::ModelViewData& data, const QString& folder,
                                 const QString& base, plot::ImageFormat format,
                                 const plot::ImageOptions& options, QSize viewSize) {
    if (!data.run) throw std::invalid_argument("no model run to export");
    const ae::model::ModelRun<float>& run = *data.run;
    if (!QDir().mkpath(folder)) {
        throw io::WriteError(
            QStringLiteral("%1: cannot create the directory").arg(folder).toStdString());
    }
    const QDir into(folder);
    const QString suffix = plot::imageFormatSuffix(format);
    const int layers = static_cast<int>(run.layers.size());
    const int heads = run.config.heads;
    const int digits = std::max(layers, heads) >= 100 ? 3 : 2;
    QStringList files;
    // The CSV first: it is the smallest file, so an unwritable folder fails before any image.
    const std::vector<ae::model::HeadSummary> summaries =
        data.summaries.empty() ? ae::model::summarizeHeads(run) : data.summaries;
    QByteArray csv;
    {
        QTextStream out(&csv);
        out << "layer,head";
        for (const ae::model::HeadScore& score : ae::model::headScores())
            out << ',' << score.key;
        out << '\n';
        for (const ae::model::HeadSummary& s : summaries) {
            out << s.layer << ',' << s.head;
            for (const ae::model::HeadScore& score : ae::model::headScores())
                out << ',' << csvNumber(s.*score.value);
            out << '\n';
        }
    }
    const QString csvFile = into.filePath(base + QStringLiteral("-heads.csv"));
    io::writeFileAtomically(csvFile, csv);
    files << csvFile;

    QWidget holder;  // the map's plot lives (hidden) as its child
    auto* map = new plot::HeatmapController(&holder);
    for (int layer = 0; layer < layers; ++layer) {
        // A long run's maps are recomputed a layer at a time, exactly as the run made them.
        const ae::model::LayerRecord<float>& record = run.layers[static_cast<size_t>(layer)];
        std::vector<ae::model::Matrix<float>> recomputed;
        if (!record.hasMaps()) {
            if (!data.layerWeights)
                throw std::invalid_argument("the run kept no maps of layer " +
                                            std::to_string(layer) + " and cannot recompute them");
            recomputed = data.layerWeights(layer);
            if (static_cast<int>(recomputed.size()) != heads)
                throw std::invalid_argument("layer " + std::to_string(layer) +
                                            "'s maps could not be recomputed: the model is closed");
        }
        const std::vector<ae::model::Matrix<float>>& maps =
            record.hasMaps() ? record.weights : recomputed;
        for (int head = 0; head < heads; ++head) {
            showModelHead(*map, data, layer, head, maps[static_cast<size_t>(head)]);
            const QString file = into.filePath(QStringLiteral("%1-L%2-H%3.%4")
                                                   .arg(base)
                                                   .arg(layer, digits, 10, QLatin1Char('0'))
                                                   .arg(head, digits, 10, QLatin1Char('0'))
                                                   .arg(suffix));
            plot::saveImage(file, {map}, options);
            files << file;
        }
    }

    const std::pair<plot::ModelViewPart, QString> parts[] = {
        {plot::ModelViewPart::Model, "grid"},
        {plot::ModelViewPart::Rollout, "rollout"},
        {plot::ModelViewPart::QueryKey, "qk"}};
    for (const auto& [part, name] : parts) {
        plot::ModelViewImage image;
        image.part = part;
        image.size = viewSize;
        image.scale = options.scale;
        image.head = data.openHead;
        const QString file = into.filePath(QStringLiteral("%1-%2.%3").arg(base, name, suffix));
        io::writeFileAtomically(file, plot::renderModelView(data, image, format));
        files << file;
    }
    return files;
}

void nameModelLayer(plot::HeatmapGrid& grid, const document::AttentionDocument& document) {
    const std::optional<document::ModelReference> reference =
        document::modelReference(document.scene().viewJson);
    grid.setTitlePrefix(reference ? QObject::tr("layer %1 · ").arg(reference->layer) : QString());
}

QStringList exportEveryHead(document::AttentionDocument* document, const plot::GridView& view,
                            const QString& folder, const QString& base, plot::ImageFormat format,
                            const plot::ImageOptions& options) {
    if (!QDir().mkpath(folder)) {
        throw io::WriteError(
            QStringLiteral("%1: cannot create the directory").arg(folder).toStdString());
    }
    const int heads = document->scene().heads;
    const int digits = heads >= 100 ? 3 : 2;
    plot::HeatmapGrid grid;
    nameModelLayer(grid, *document);
    DocumentMaps gridFollowsDocument(document, &grid);
    QStringList files;
    for (int h = 0; h < heads; ++h) {
        plot::GridView one = plot::figureView(view);
        one.mode = plot::ViewMode::AllStages;  // holds every head's maps, past the grid's 48 too
        one.head = h;
        grid.setView(one);
        const QString file = QDir(folder).filePath(QStringLiteral("%1-%2-head%3.%4")
                                                       .arg(base, plot::stageKey(view.stage))
                                                       .arg(h, digits, 10, QLatin1Char('0'))
                                                       .arg(plot::imageFormatSuffix(format)));
        plot::saveImage(file, {grid.tile(view.stage, h)}, options);
        files << file;
    }
    return files;
}

std::vector<double> sweepValues(const Scene& scene, const SweepRequest& request) {
    const double low = std::min(request.from, request.to);
    const double high = std::max(request.from, request.to);
    std::vector<double> values;
    switch (request.parameter) {
        case SweepParameter::Divisor: {
            // Log-spaced: each step multiplies the divisor by the same factor, as the slider does.
            if (low <= 0.0) return values;
            const int steps = std::max(2, request.steps);
            for (int i = 0; i < steps; ++i)
                values.push_back(low * std::pow(high / low, i / double(steps - 1)));
            break;
        }
        case SweepParameter::Heads:
            for (int h = std::max(1, static_cast<int>(std::ceil(low))); h <= high; ++h) {
                if (headCountAllowed(scene, h)) values.push_back(h);
            }
            break;
        case SweepParameter::Window:
            for (int w = std::max(0, static_cast<int>(std::ceil(low))); w <= high; ++w)
                values.push_back(w);
            break;
    }
    return values;
}

QStringList exportSweep(const Scene& scene, const plot::GridView& view, const SweepRequest& request,
                        const QString& folder, const QString& base, plot::ImageOptions options) {
    const std::vector<double> values = sweepValues(scene, request);
    if (values.empty()) throw std::invalid_argument("the sweep's range holds no usable value");
    if (!QDir().mkpath(folder)) {
        throw io::WriteError(
            QStringLiteral("%1: cannot create the directory").arg(folder).toStdString());
    }
    document::AttentionDocument document;
    document.resetScene(scene);
    document.waitForResults();  // a large scene computes on the worker thread
    plot::HeatmapGrid grid;
    nameModelLayer(grid, document);
    DocumentMaps gridFollowsDocument(&document, &grid);
    grid.setView(plot::figureView(view));
    const QString name = parameterName(request.parameter);
    QStringList files;
    std::vector<QImage> frames;
    for (size_t i = 0; i < values.size(); ++i) {
        options.caption = applySweepValue(document, request.parameter, values[i]);
        document.waitForResults();
        if (!document.errorText().isEmpty()) {
            throw std::invalid_argument(
                QStringLiteral("%1: %2").arg(options.caption, document.errorText()).toStdString());
        }
        if (options.size.isEmpty())
            options.size = plot::naturalImageSize(static_cast<int>(grid.tiles().size()));
        const QImage frame = plot::renderImage(plot::gridTiles(grid), options);
        const QString file = QDir(folder).filePath(
            QStringLiteral("%1-%2-%3.png").arg(base, name).arg(i, 3, 10, QLatin1Char('0')));
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        frame.save(&buffer, "PNG");
        io::writeFileAtomically(file, bytes);
        files << file;
        if (request.gif) frames.push_back(frame);
    }
    if (request.gif) {
        const QString file = QDir(folder).filePath(QStringLiteral("%1-%2.gif").arg(base, name));
        io::writeFileAtomically(file, gifBytes(frames, 80));
        files << file;
    }
    return files;
}

QByteArray gifBytes(const std::vector<QImage>& frames, int delayCentiseconds) {
    QByteArray bytes;
    if (frames.empty()) return bytes;
    const int width = frames.front().width(), height = frames.front().height();
    int error = 0;
    GifFileType* gif = EGifOpen(&bytes, appendBytes, &error);
    if (!gif) gifFailed(error);
    EGifSetGifVersion(gif, true);  // GIF89a: delays and looping
    const auto check = [&](int result) {
        if (result == GIF_ERROR) {
            const int code = gif->Error;
            EGifCloseFile(gif, &error);
            gifFailed(code);
        }
    };
    check(EGifPutScreenDesc(gif, width, height, 8, 0, nullptr));
    // The Netscape extension: loop forever, as a slide expects.
    check(EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE));
    check(EGifPutExtensionBlock(gif, 11, "NETSCAPE2.0"));
    const unsigned char loop[3] = {1, 0, 0};
    check(EGifPutExtensionBlock(gif, 3, loop));
    check(EGifPutExtensionTrailer(gif));

    const size_t pixels = static_cast<size_t>(width) * static_cast<size_t>(height);
    std::vector<GifByteType> red(pixels), green(pixels), blue(pixels), indices(pixels);
    for (const QImage& frame : frames) {
        const QImage rgb = frame.convertToFormat(QImage::Format_RGB32);
        if (rgb.size() != QSize(width, height)) {
            EGifCloseFile(gif, &error);
            throw io::WriteError("GIF: frames differ in size");
        }
        for (int y = 0; y < height; ++y) {
            const QRgb* line = reinterpret_cast<const QRgb*>(rgb.constScanLine(y));
            for (int x = 0; x < width; ++x) {
                const size_t i = static_cast<size_t>(y) * width + x;
                red[i] = qRed(line[x]);
                green[i] = qGreen(line[x]);
                blue[i] = qBlue(line[x]);
            }
        }
        int colours = 256;
        GifColorType palette[256];
        if (GifQuantizeBuffer(width, height, &colours, red.data(), green.data(), blue.data(),
                              indices.data(), palette) == GIF_ERROR) {
            EGifCloseFile(gif, &error);
            throw io::WriteError("GIF: cannot reduce a frame to 256 colours");
        }
        GraphicsControlBlock control{DISPOSE_DO_NOT, false, delayCentiseconds,
                                     NO_TRANSPARENT_COLOR};
        GifByteType extension[4];
        EGifGCBToExtension(&control, extension);
        check(EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, extension));
        ColorMapObject* map = GifMakeMapObject(256, palette);
        const int described = EGifPutImageDesc(gif, 0, 0, width, height, false, map);
        GifFreeMapObject(map);
        check(described);
        check(EGifPutLine(gif, indices.data(), static_cast<int>(pixels)));
    }
    if (EGifCloseFile(gif, &error) == GIF_ERROR) gifFailed(error);
    return bytes;
}

}  // namespace ae::ui
