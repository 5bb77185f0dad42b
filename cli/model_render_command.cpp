#include "cli/model_render_command.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QWidget>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/command_support.h"
#include "cli/run_command.h"
#include "core/model/model_analysis.h"
#include "core/model/model_layer_scene.h"
#include "io/formats/result_export.h"
#include "io/model/model_folder.h"
#include "io/tokenizer/tokenizer.h"
#include "plot/alignment_figure.h"
#include "plot/effect_map.h"
#include "plot/model_view_export.h"
#include "plot/presentation_style.h"

namespace ae::cli {
namespace {

constexpr int kMaxSide = 20000;

int integerOption(const QCommandLineParser& parser, const QString& name, int low, int high) {
    bool ok = false;
    const int value = parser.value(name).toInt(&ok);
    if (!ok || value < low || value > high) {
        refuse(QStringLiteral("render: --%1: expected %2 to %3, got %4")
                   .arg(name)
                   .arg(low)
                   .arg(high)
                   .arg(parser.value(name)));
    }
    return value;
}

// The folder's tokenizer when it has one: labels for the tokens and the predicted ids.
std::optional<io::Tokenizer> optionalTokenizer(const QString& directory) {
    try {
        return io::Tokenizer::load(directory);
    } catch (const io::TokenizerError&) {
        return std::nullopt;
    }
}

// Every head's summary, with the induction score measured on the ids repeated twice when the
// model's positions allow it (NaN otherwise, as the window shows before it is measured).
std::vector<model::HeadSummary> summaries(const model::Model& model,
                                          const model::ModelRun<float>& run,
                                          const std::vector<long long>& ids) {
    std::vector<model::HeadSummary> all = model::summarizeHeads(run);
    const int positions = model.config.positions;
    const long long doubled = 2 * static_cast<long long>(ids.size());
    if (ids.size() < 2 || (positions > 0 && doubled > positions)) return all;
    std::vector<long long> repeated = ids;
    repeated.insert(repeated.end(), ids.begin(), ids.end());
    const model::ModelRun<float> repeatedRun = model::runModel<float>(model, repeated);
    model::addRepeatedRunScores(all, repeatedRun, 0, static_cast<int>(ids.size()));
    return all;
}

// The alignment view of an encoder–decoder model (--view cross): the cross-attention weights of
// one head, a layer's mean or the mean over every layer, source tokens along the bottom and, down
// the left, the token each decoder row produces (Bahdanau et al.'s rows: row i predicts the next
// decoder input; the last row the model's own choice, named by `tokenText`), as a figure.
QByteArray renderAlignment(const model::Model& model, const std::vector<long long>& ids,
                           const std::vector<std::string>& sourceLabels,
                           const std::vector<long long>& decoderIds,
                           const std::vector<std::string>& targetLabels, int layer, int head,
                           const plot::ModelViewImage& image, plot::ImageFormat format,
                           const std::function<QString(long long)>& tokenText) {
    const model::EncoderDecoderRun<float> run =
        model::runEncoderDecoder<float>(model, ids, decoderIds);
    QWidget host;  // owns the map's plot, which owns the map
    plot::EffectMap* map = plot::newAlignmentMap(&host);
    QStringList columns;
    for (const std::string& label : sourceLabels)
        columns << QString::fromStdString(label);
    plot::showAlignment(map, model.decoder->config, run.decoder, layer, head,
                        plot::alignmentRowLabels(run.decoder, targetLabels, tokenText), columns);
    if (image.presentation) {
        plot::scalePlotFonts(&host, 1.0, 1.5, true);
        plot::setPlotsHighContrast(&host, true);
    }
    plot::ImageOptions options;
    options.size = image.size;
    options.scale = image.scale;
    return map->image(format, options);
}

}  // namespace

bool isModelRender(const QStringList& arguments) {
    if (arguments.contains(QStringLiteral("--view"))) return true;
    for (const QString& a : arguments) {
        if (a.startsWith(QStringLiteral("--view="))) return true;
    }
    return arguments.size() > 1 && !arguments[1].startsWith('-') && QFileInfo(arguments[1]).isDir();
}

int renderModelCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Draw a whole model's view (every head, rollout, one head's queries and keys, or one "
        "layer's maps) into an image, as the window does.");
    parser.addHelpOption();
    parser.addPositionalArgument("model", "A Hugging Face model folder, or builtin:NAME.");
    parser.addOptions({
        {"text", "The text, tokenized with the folder's tokenizer.", "text"},
        {"ids", "Token ids instead of text, e.g. 464,3290,3332.", "ids"},
        {"view",
         "model (every head), head (one layer's maps), rollout, qk, or cross (an encoder-decoder "
         "model's alignment: target x source cross-attention weights) (default model).",
         "view", "model"},
        {"layer",
         "The layer of --view head or qk (default 0); of --view cross, the decoder layer "
         "(default: the mean over every layer).",
         "L", "0"},
        {"head",
         "The head of --view qk, or the one head of --view head or cross (default all; cross: "
         "their mean).",
         "H"},
        {"decoder-ids", "--view cross: the decoder input, from decoder_start_token_id.", "ids"},
        {"target-text", "--view cross: the target text, as the decoder input.", "text"},
        {"generate", "--view cross: the decoder input greedy decoding produces, up to N tokens.",
         "N"},
        {"position", "The selected position (default: the last token).", "P"},
        {"qk", "separate, joint or norms (default separate).", "mode", "separate"},
        {{"o", "output"}, "The image: .png, .jpg, .pdf or .svg.", "out"},
        {"width", "Width in pixels (default 1280).", "w", "1280"},
        {"height", "Height in pixels (default 800).", "h", "800"},
        {"scale", "Pixels per pixel for print, text included (default 1).", "s", "1"},
        {"presentation", "Larger labels and thicker marks, as presentation mode draws."},
    });
    if (!parser.parse(arguments)) refuse("render: " + parser.errorText());
    if (parser.isSet("help")) {
        std::fputs((parser.helpText() + '\n').toLocal8Bit().constData(), stdout);
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("render: --view: give one MODEL_DIR");
    if (parser.isSet("text") == parser.isSet("ids"))
        refuse("render: give --text TEXT or --ids 1,2,3");
    if (!parser.isSet("output")) refuse("render: -o OUT.(png|jpg|pdf|svg) is required");
    const QString output = parser.value("output");
    const std::optional<plot::ImageFormat> format = plot::imageFormatForFile(output);
    if (!format) refuse("render: -o: expected a .png, .jpg, .pdf or .svg file, got " + output);
    const QString view = parser.value("view");
    const QStringList views{"model", "head", "rollout", "qk", "cross"};
    if (!views.contains(view))
        refuse("render: --view: expected model, head, rollout, qk or cross, got " + view);
    const QString qk = parser.value("qk");
    const QStringList modes{"separate", "joint", "norms"};
    if (!modes.contains(qk)) refuse("render: --qk: expected separate, joint or norms, got " + qk);
    plot::ModelViewImage image;
    image.size = QSize(integerOption(parser, "width", 16, kMaxSide),
                       integerOption(parser, "height", 16, kMaxSide));
    bool ok = false;
    image.scale = parser.value("scale").toDouble(&ok);
    if (!ok || !std::isfinite(image.scale) || image.scale < 0.1 || image.scale > 10)
        refuse("render: --scale: expected a number from 0.1 to 10, got " + parser.value("scale"));
    if (image.size.width() * image.scale * image.size.height() * image.scale > 200e6)
        refuse("render: the image is more than 200 million pixels");
    image.presentation = parser.isSet("presentation");
    image.qkMode = static_cast<model::QkProjectionMode>(modes.indexOf(qk));

    const QString directory = modelFolderArgument(positional.first(), "render");
    try {
        const io::ModelFolder folder(directory);
        const model::Model& model = folder.model();
        const std::optional<io::Tokenizer> tokenizer = optionalTokenizer(directory);
        std::vector<long long> ids;
        std::vector<std::string> labels;
        if (parser.isSet("ids")) {
            ids = integerList(parser.value("ids"), "--ids", "render");
        } else {
            ids = tokenizeForRun(directory, parser.value("text"), nullptr);
        }
        if (ids.empty()) refuse("render: no tokens to run");
        for (long long id : ids) {
            const bool known = tokenizer && id >= 0 && id <= std::numeric_limits<int>::max();
            labels.push_back(known ? tokenizer->displayText(static_cast<int>(id)).toStdString()
                                   : std::to_string(id));
        }
        const bool seq2seq = model.config.isEncoderDecoder();
        if (seq2seq != (view == QLatin1String("cross")))
            refuse(seq2seq ? QStringLiteral("render: %1 is an encoder-decoder model: --view cross "
                                            "draws its alignment (the other views do not take "
                                            "one yet)")
                                 .arg(QString::fromLatin1(model::familyName(model.config.family)))
                           : QStringLiteral("render: --view cross is for encoder-decoder models"));
        if (seq2seq) {
            model::RunOptions options;
            std::vector<std::string> targetLabels;
            const std::vector<long long> decoderIds = decoderInputFromOptions(
                parser, "render", directory, model, ids, options, targetLabels);
            const model::Config& decoder = model.decoder->config;
            const int layer =
                parser.isSet("layer") ? integerOption(parser, "layer", 0, decoder.layers - 1) : -1;
            const int head =
                parser.isSet("head") ? integerOption(parser, "head", 0, decoder.heads - 1) : -1;
            if (head >= 0 && layer < 0) refuse("render: --view cross: --head needs its --layer");
            std::optional<io::Tokenizer> target;
            try {
                target.emplace(io::Tokenizer::loadTarget(directory));
            } catch (const io::TokenizerError&) {
                // No tokenizer: the ids label themselves.
            }
            const auto tokenText = [&target](long long id) {
                return target && id >= 0 && id <= std::numeric_limits<int>::max()
                           ? target->displayText(static_cast<int>(id))
                           : QString::number(id);
            };
            io::writeFileAtomically(
                output, renderAlignment(model, ids, labels, decoderIds, targetLabels, layer, head,
                                        image, *format, tokenText));
            return kSuccess;
        }
        const int layers = model.config.layers;
        const int layer = integerOption(parser, "layer", 0, layers - 1);
        std::optional<int> head;
        if (parser.isSet("head")) head = integerOption(parser, "head", 0, model.config.heads - 1);
        const int tokens = static_cast<int>(ids.size());
        if (parser.isSet("position"))
            image.position = integerOption(parser, "position", 0, tokens - 1);
        model::checkInputs(model.config, ids, {});

        QByteArray bytes;
        if (view == QLatin1String("head")) {
            // The layer as the explorer opens it: its scene, computed by the one-layer engine.
            model::checkRunFitsInMemory(model,
                                        model::runMemory(model, tokens, sizeof(double)).total(),
                                        "the model in double");
            const model::ModelRun<double> run = model::runModel<double>(model, ids);
            const Scene scene = model::layerScene(model, run, layer, labels);
            plot::RenderRequest request;
            request.head = head;
            request.image.size = image.size;
            request.image.scale = image.scale;
            bytes = plot::renderScene(scene, request, *format);
        } else {
            model::checkRunFitsInMemory(model,
                                        model::runMemory(model, tokens, sizeof(float)).total(),
                                        "the model in float");
            auto run = std::make_shared<model::ModelRun<float>>(model::runModel<float>(model, ids));
            plot::ModelViewData data;
            for (const std::string& label : labels)
                data.tokens << QString::fromStdString(label);
            if (tokenizer) {
                data.tokenText = [&tokenizer](long long id) {
                    return id >= 0 && id <= std::numeric_limits<int>::max()
                               ? tokenizer->displayText(static_cast<int>(id))
                               : QString();
                };
            }
            data.summaries = summaries(model, *run, ids);
            const int position = image.position >= 0 ? image.position : tokens - 1;
            if (model.config.isDecoder()) data.predictions = model::topPredictions(*run, position);
            data.run = run;
            image.part = view == QLatin1String("rollout") ? plot::ModelViewPart::Rollout
                         : view == QLatin1String("qk")    ? plot::ModelViewPart::QueryKey
                                                          : plot::ModelViewPart::Model;
            if (view == QLatin1String("qk") || parser.isSet("head"))
                image.head = std::pair<int, int>{layer, head.value_or(0)};
            bytes = plot::renderModelView(data, image, *format);
        }
        io::writeFileAtomically(output, bytes);
    } catch (const model::ModelError& error) {
        const QString message = QString::fromStdString(error.what());
        refuse(message.startsWith(directory) ? message : directory + ": " + message);
    } catch (const std::invalid_argument& error) {
        // refuse()'s own lines already name the command; the drawing's name only the option.
        const QString message = QString::fromStdString(error.what());
        refuse(message.startsWith(QStringLiteral("render: ")) ? message : "render: " + message);
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
