#include "cli/run_command.h"

#include <QCommandLineParser>
#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>

#include "cli/command_support.h"
#include "core/model/model_layer_scene.h"
#include "io/formats/result_export.h"
#include "io/model/model_folder.h"
#include "io/model/model_result.h"
#include "io/model/seq2seq_input.h"
#include "io/scene/scene_file.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::cli {
namespace {

// "0.1, 1.3" → heads 1 of layer 0 and 3 of layer 1: each LAYER.HEAD in the model, none twice.
std::vector<model::HeadAblation> ablationList(const QString& text, const model::Config& c) {
    const QString range =
        QStringLiteral("layer 0 to %1 and head 0 to %2 (the model has %3 layers of %4 heads)")
            .arg(c.layers - 1)
            .arg(c.heads - 1)
            .arg(c.layers)
            .arg(c.heads);
    std::vector<model::HeadAblation> heads;
    for (const QString& part : text.split(',')) {
        const QString value = part.trimmed();
        const QStringList numbers = value.split('.');
        bool layerOk = false, headOk = false;
        model::HeadAblation head;
        if (numbers.size() == 2) {
            head.layer = numbers[0].toInt(&layerOk);
            head.head = numbers[1].toInt(&headOk);
        }
        if (!layerOk || !headOk) {
            refuse(QStringLiteral("run: --ablate: expected LAYER.HEAD[,LAYER.HEAD...] with %1, "
                                  "got \"%2\"")
                       .arg(range, value));
        }
        if (head.layer < 0 || head.layer >= c.layers || head.head < 0 || head.head >= c.heads)
            refuse(QStringLiteral("run: --ablate: %1 is outside the model: %2").arg(value, range));
        if (std::find(heads.begin(), heads.end(), head) != heads.end())
            refuse(QStringLiteral("run: --ablate: %1 is listed twice").arg(value));
        heads.push_back(head);
    }
    return heads;
}

// `mapLayers` (run --layers): the layers whose maps are written; empty: every layer's. The run
// then keeps no maps while it runs and recomputes these layers' from their residual inputs
// afterwards, exactly (model::recomputeLayerMaps), so a long text needs room for their maps only.
template <typename Scalar>
void runAndWrite(const model::Model& model, const std::vector<long long>& ids,
                 model::RunOptions options, const std::vector<int>& mapLayers, bool json,
                 const QString& output) {
    if (!mapLayers.empty()) {
        options.keptMaps = model::RunOptions::KeptMaps::Chosen;
        options.mapLayers.clear();
    }
    // Checked here with the result's text on top (~24 bytes a number; npy writes one matrix at a
    // time), before anything the size of the run exists.
    model::checkInputs(model.config, ids, options);
    const model::RunMemory need =
        model::runMemory(model, static_cast<long long>(ids.size()), sizeof(Scalar),
                         mapLayers.empty() ? -1 : static_cast<int>(mapLayers.size()));
    model::checkRunFitsInMemory(
        model, need.total() + (json ? 24.0 * need.keptNumbers : 0.0),
        std::string(sizeof(Scalar) == 4 ? "the model in float" : "the model in double") +
            (json ? " and the result file" : ""));
    model::ModelRun<Scalar> run = model::runModel<Scalar>(model, ids, options);
    for (int layer : mapLayers)
        model::recomputeLayerMaps(model, run, layer);
    if (json) {
        io::writeFileAtomically(output, io::modelResultJson(run));
    } else {
        io::writeModelNpyDirectory(run, output);
    }
}

// An encoder–decoder model on the source ids: teacher forced on `decoderIds`, or, with
// `generate` > 0, on the decoder ids greedy decoding produced (printed as they are).
template <typename Scalar>
void runEncoderDecoderAndWrite(const model::Model& model, const std::vector<long long>& ids,
                               std::vector<long long> decoderIds, int generate,
                               const model::RunOptions& options, bool json, const QString& output) {
    if (generate > 0) {
        decoderIds = model::generateGreedy<Scalar>(model, ids, generate, options);
        QStringList text;
        for (long long id : decoderIds)
            text << QString::number(id);
        printLine(stdout, "decoder ids: " + text.join(','));
    }
    // Checked with the result's text on top (~24 bytes a number; npy writes one matrix at a
    // time) before the run exists.
    const model::RunMemory need =
        model::encoderDecoderRunMemory(model, static_cast<long long>(ids.size()),
                                       static_cast<long long>(decoderIds.size()), sizeof(Scalar));
    model::checkRunFitsInMemory(
        model, need.total() + (json ? 24.0 * need.keptNumbers : 0.0),
        std::string(sizeof(Scalar) == 4 ? "the model in float" : "the model in double") +
            (json ? " and the result file" : ""));
    const model::EncoderDecoderRun<Scalar> run =
        model::runEncoderDecoder<Scalar>(model, ids, decoderIds, options);
    if (json)
        io::writeFileAtomically(output, io::encoderDecoderResultJson(run));
    else
        io::writeEncoderDecoderNpyDirectory(run, output);
}

}  // namespace

std::vector<long long> integerList(const QString& text, const QString& option,
                                   const QString& command) {
    std::vector<long long> values;
    for (const QString& part : text.split(',')) {
        if (part.trimmed().isEmpty()) continue;
        bool ok = false;
        const long long v = part.trimmed().toLongLong(&ok);
        if (!ok) {
            refuse(QStringLiteral("%1: %2: expected comma-separated integers, got \"%3\"")
                       .arg(command, option, part.trimmed()));
        }
        values.push_back(v);
    }
    return values;
}

std::vector<long long> tokenizeForRun(const QString& modelDirectory, const QString& text,
                                      std::vector<std::string>* labels) {
    try {
        const io::Tokenizer tokenizer = io::Tokenizer::load(modelDirectory);
        std::vector<long long> ids;
        for (int id : tokenizer.encode(text, true)) {
            ids.push_back(id);
            if (labels) labels->push_back(tokenizer.displayText(id).toStdString());
        }
        return ids;
    } catch (const io::TokenizerError& error) {
        refuse(QString::fromStdString(error.what()));
    }
}

// Sentence A and sentence B through the folder's pair template: the ids, and their token
// types (for the families with a token-type table).
std::vector<long long> tokenizePairForRun(const QString& modelDirectory, const QString& first,
                                          const QString& second, std::vector<int>* types) {
    try {
        const io::Tokenizer tokenizer = io::Tokenizer::load(modelDirectory);
        const io::Tokenizer::Encoded pair = tokenizer.encodePair(first, second);
        *types = pair.typeIds;
        return {pair.ids.begin(), pair.ids.end()};
    } catch (const io::TokenizerError& error) {
        refuse(QString::fromStdString(error.what()));
    }
}

std::vector<long long> targetTextDecoderInput(const QString& modelDirectory, const QString& target,
                                              const model::Config& config,
                                              std::vector<std::string>* labels) {
    try {
        const io::Tokenizer tokenizer = io::Tokenizer::loadTarget(modelDirectory);
        const std::vector<long long> ids = io::teacherForcedDecoderIds(tokenizer, target, config);
        if (labels)
            for (long long id : ids)
                labels->push_back(tokenizer.displayText(static_cast<int>(id)).toStdString());
        return ids;
    } catch (const io::TokenizerError& error) {
        refuse(QString::fromStdString(error.what()));
    }
}

std::vector<long long> decoderInputFromOptions(
    const QCommandLineParser& parser, const QString& command, const QString& modelDirectory,
    const model::Model& model, const std::vector<long long>& ids, const model::RunOptions& options,
    std::vector<std::string>& labels) {
    const model::Config& config = model.config;
    const int given = int(parser.isSet("decoder-ids")) + int(parser.isSet("target-text")) +
                      int(parser.isSet("generate"));
    if (given != 1)
        refuse(QStringLiteral("%1: %2 is an encoder-decoder model: give the decoder input once: "
                              "--decoder-ids (starting with decoder_start_token_id %3, teacher "
                              "forcing), --target-text TEXT or --generate N")
                   .arg(command, QString::fromLatin1(model::familyName(config.family)))
                   .arg(config.decoderStartToken));
    std::vector<long long> decoderIds;
    if (parser.isSet("target-text"))
        return targetTextDecoderInput(modelDirectory, parser.value("target-text"), config, &labels);
    if (parser.isSet("decoder-ids")) {
        decoderIds = integerList(parser.value("decoder-ids"), "--decoder-ids", command);
    } else {
        bool ok = false;
        const int count = parser.value("generate").toInt(&ok);
        if (!ok || count < 1)
            refuse(command + ": --generate: expected a number of tokens >= 1, got " +
                   parser.value("generate"));
        decoderIds = model::generateGreedy<float>(model, ids, count, options);
    }
    std::optional<io::Tokenizer> tokenizer;
    try {
        tokenizer.emplace(io::Tokenizer::loadTarget(modelDirectory));
    } catch (const io::TokenizerError&) {
        // No tokenizer: the ids label themselves.
    }
    for (long long id : decoderIds) {
        const bool known = tokenizer && id >= 0 && id <= std::numeric_limits<int>::max();
        labels.push_back(known ? tokenizer->displayText(static_cast<int>(id)).toStdString()
                               : std::to_string(id));
    }
    return decoderIds;
}

int runModelCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Run a whole model (a family of docs/models.md: gpt2, bert, llama, qwen2/3, mistral, "
        "gemma 1-3, phi3, gpt_neox, olmo2, smollm3) on one sequence and write every layer's "
        "residual input, every head's q, k, v, scores and weights, and the logits (or an "
        "encoder's last hidden state).");
    parser.addHelpOption();
    parser.addPositionalArgument("model",
                                 "A Hugging Face model folder (config.json and "
                                 "model.safetensors or its shards), or builtin:NAME "
                                 "(a model shipped with the app).");
    parser.addOptions({
        {"text", "The text, tokenized with the folder's tokenizer.", "text"},
        {"text-pair",
         "A second text (sentence B) after --text, joined as the tokenizer's pair template "
         "joins them ([CLS] A [SEP] B [SEP]), with its token types.",
         "text"},
        {"ids", "Token ids instead of text, e.g. 464,3290,3332.", "ids"},
        {"attention-mask",
         "1 for a token, 0 for padding, one per token (as Hugging Face's "
         "attention_mask).",
         "mask"},
        {"token-types",
         "The sentence of each token, e.g. 0,0,1,1 (as Hugging Face's token_type_ids: 0 for "
         "text A, 1 for text B), for the families with token-type embeddings.",
         "types"},
        {{"o", "output"}, "The result file (json) or folder (npy).", "out"},
        {"double", "Compute in double instead of float."},
        {"format", "json (default: the reference's model-result format) or npy.", "format", "json"},
        {"layers",
         "Write the scores and weights of these layers only, e.g. 5,6 (from 0): the run keeps no "
         "maps while it runs and recomputes these layers' exactly from their residual inputs, so "
         "a long text needs room for their maps alone. JSON lists them in map_layers.",
         "layers"},
        {"ablate",
         "Switch heads off, e.g. 0.1,2.3 (layer.head, from 0): each one's context (weights·v) is "
         "replaced before the output projection.",
         "heads"},
        {"ablate-mode", "zero (default: the context becomes 0) or mean (its mean over positions).",
         "mode", "zero"},
        {"decoder-ids",
         "Encoder-decoder models (t5, bart, marian): the decoder input, teacher forced, starting "
         "with the model's decoder_start_token_id, e.g. 0,12,5. --ids (or --text) are then the "
         "encoder's source and --attention-mask its padding.",
         "ids"},
        {"target-text",
         "Encoder-decoder models: the target text, tokenized with the target side's tokenizer "
         "(Marian: target.spm) and teacher forced as the decoder input after "
         "decoder_start_token_id.",
         "text"},
        {"generate",
         "Encoder-decoder models: decode greedily up to N tokens (or to the end-of-sequence "
         "token) from decoder_start_token_id, print the decoder ids produced and write the run "
         "on them.",
         "N"},
    });
    if (!parser.parse(arguments)) refuse("run: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("run: give one MODEL_DIR");
    if (parser.isSet("text") == parser.isSet("ids")) refuse("run: give --text TEXT or --ids 1,2,3");
    if (parser.isSet("text-pair") && !parser.isSet("text"))
        refuse("run: --text-pair needs --text (sentence A)");
    if (parser.isSet("text-pair") && parser.isSet("token-types"))
        refuse("run: --text-pair gives the token types itself: leave out --token-types");
    if (!parser.isSet("output")) refuse("run: -o OUT is required");
    const QString format = parser.value("format");
    if (format != "json" && format != "npy")
        refuse("run: --format: expected json or npy, got " + format);
    const QString ablateMode = parser.value("ablate-mode");
    if (ablateMode != "zero" && ablateMode != "mean")
        refuse("run: --ablate-mode: expected zero or mean, got " + ablateMode);
    if (parser.isSet("ablate-mode") && !parser.isSet("ablate"))
        refuse("run: --ablate-mode needs --ablate LAYER.HEAD[,LAYER.HEAD...]");
    const QString directory = modelFolderArgument(positional.first(), "run");

    try {
        const io::ModelFolder folder(directory);
        model::RunOptions options;
        std::vector<int> pairTypes;
        const std::vector<long long> ids =
            parser.isSet("ids")         ? integerList(parser.value("ids"), "--ids")
            : parser.isSet("text-pair") ? tokenizePairForRun(directory, parser.value("text"),
                                                             parser.value("text-pair"), &pairTypes)
                                        : tokenizeForRun(directory, parser.value("text"), nullptr);
        // A family without a token-type table (DistilBERT) takes the pair's ids alone.
        if (folder.model().config.architecture().tokenTypes) options.tokenTypes = pairTypes;
        if (parser.isSet("attention-mask")) {
            for (long long a : integerList(parser.value("attention-mask"), "--attention-mask")) {
                if (a != 0 && a != 1) refuse("run: --attention-mask: values must be 0 or 1");
                options.attentionMask.push_back(static_cast<int>(a));
            }
        }
        if (parser.isSet("token-types")) {
            // Range and count are the model's to check (model::checkInputs).
            for (long long t : integerList(parser.value("token-types"), "--token-types"))
                options.tokenTypes.push_back(
                    static_cast<int>(std::clamp<long long>(t, -1, 1 << 30)));
        }
        if (parser.isSet("ablate")) {
            options.ablations = ablationList(parser.value("ablate"), folder.model().config);
            options.ablationMode =
                ablateMode == "mean" ? model::AblationMode::Mean : model::AblationMode::Zero;
        }
        std::vector<int> mapLayers;
        if (parser.isSet("layers")) {
            const int layers = folder.model().config.layers;
            for (long long l : integerList(parser.value("layers"), "--layers")) {
                if (l < 0 || l >= layers)
                    refuse(QStringLiteral("run: --layers: %1 is outside the model's layers 0..%2")
                               .arg(l)
                               .arg(layers - 1));
                if (std::find(mapLayers.begin(), mapLayers.end(), int(l)) != mapLayers.end())
                    refuse(QStringLiteral("run: --layers: %1 is listed twice").arg(l));
                mapLayers.push_back(static_cast<int>(l));
            }
        }
        const bool json = format == "json";
        const model::Config& config = folder.model().config;
        const int decoderInputs = int(parser.isSet("decoder-ids")) + int(parser.isSet("generate")) +
                                  int(parser.isSet("target-text"));
        if (decoderInputs > 0 || config.isEncoderDecoder()) {
            const QString family = QString::fromLatin1(model::familyName(config.family));
            if (!config.isEncoderDecoder())
                refuse(
                    QStringLiteral("run: --decoder-ids, --target-text and --generate are for "
                                   "encoder-decoder models (%1); %2 is not one")
                        .arg(QString::fromStdString(model::encoderDecoderFamilyNames()), family));
            if (decoderInputs != 1)
                refuse(QStringLiteral("run: %1 is an encoder-decoder model: give the decoder "
                                      "input once: --decoder-ids (starting with "
                                      "decoder_start_token_id %2, teacher forcing), --target-text "
                                      "TEXT or --generate N")
                           .arg(family)
                           .arg(config.decoderStartToken));
            if (!mapLayers.empty())
                refuse(
                    "run: --layers is not available for encoder-decoder models yet: every "
                    "layer's maps are written");
            int generate = 0;
            if (parser.isSet("generate")) {
                bool ok = false;
                generate = parser.value("generate").toInt(&ok);
                if (!ok || generate < 1)
                    refuse("run: --generate: expected a number of tokens >= 1, got " +
                           parser.value("generate"));
            }
            const std::vector<long long> decoderIds =
                parser.isSet("decoder-ids")
                    ? integerList(parser.value("decoder-ids"), "--decoder-ids")
                : parser.isSet("target-text")
                    ? targetTextDecoderInput(directory, parser.value("target-text"), config)
                    : std::vector<long long>{};
            if (parser.isSet("double"))
                runEncoderDecoderAndWrite<double>(folder.model(), ids, decoderIds, generate,
                                                  options, json, parser.value("output"));
            else
                runEncoderDecoderAndWrite<float>(folder.model(), ids, decoderIds, generate, options,
                                                 json, parser.value("output"));
            return kSuccess;
        }
        if (parser.isSet("double")) {
            runAndWrite<double>(folder.model(), ids, options, mapLayers, json,
                                parser.value("output"));
        } else {
            runAndWrite<float>(folder.model(), ids, options, mapLayers, json,
                               parser.value("output"));
        }
    } catch (const model::ModelError& error) {
        // Refusals about the ids or the mask do not name a file: say which model they were for.
        const QString message = QString::fromStdString(error.what());
        refuse(message.startsWith(directory) ? message : directory + ": " + message);
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

int modelSceneCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Write one layer of a whole model as a scene (format version 2): its attention with the "
        "layer's residual input as the embeddings, for the window, export and render.");
    parser.addHelpOption();
    parser.addPositionalArgument("model", "A Hugging Face model folder, or builtin:NAME.");
    parser.addOptions({
        {"text", "The text, tokenized with the folder's tokenizer.", "text"},
        {"ids", "Token ids instead of text, e.g. 464,3290,3332.", "ids"},
        {"attention-mask", "1 for a token, 0 for padding, one per token.", "mask"},
        {"layer", "The layer, from 0.", "l"},
        {{"o", "output"}, "The scene file.", "out"},
        {"decoder-ids",
         "Encoder-decoder models: the decoder input (teacher forced, from "
         "decoder_start_token_id).",
         "ids"},
        {"target-text",
         "Encoder-decoder models: the target text, as the decoder input after "
         "decoder_start_token_id.",
         "text"},
        {"generate",
         "Encoder-decoder models: the decoder input greedy decoding produces, up to N tokens.",
         "N"},
        {"stack",
         "Encoder-decoder models: encoder (its self-attention), decoder (the decoder's causal "
         "self-attention) or cross (the decoder's cross-attention: a cross scene whose source "
         "is the encoder's output).",
         "which"},
    });
    if (!parser.parse(arguments)) refuse("scene: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("scene: give one MODEL_DIR");
    if (parser.isSet("text") == parser.isSet("ids"))
        refuse("scene: give --text TEXT or --ids 1,2,3");
    if (!parser.isSet("layer")) refuse("scene: --layer L is required");
    if (!parser.isSet("output")) refuse("scene: -o SCENE.json is required");
    bool ok = false;
    const int layer = parser.value("layer").toInt(&ok);
    if (!ok) refuse("scene: --layer: expected an integer, got " + parser.value("layer"));
    const QString directory = modelFolderArgument(positional.first(), "scene");
    try {
        const io::ModelFolder folder(directory);
        std::vector<std::string> labels;
        std::vector<long long> ids;
        if (parser.isSet("ids")) {
            ids = integerList(parser.value("ids"), "--ids");
            for (long long id : ids)
                labels.push_back(std::to_string(id));
        } else {
            ids = tokenizeForRun(directory, parser.value("text"), &labels);
        }
        model::RunOptions options;
        if (parser.isSet("attention-mask")) {
            for (long long a : integerList(parser.value("attention-mask"), "--attention-mask")) {
                if (a != 0 && a != 1) refuse("scene: --attention-mask: values must be 0 or 1");
                options.attentionMask.push_back(static_cast<int>(a));
            }
        }
        const model::Config& config = folder.model().config;
        if (config.isEncoderDecoder() || parser.isSet("stack")) {
            const QString stack = parser.value("stack");
            if (!config.isEncoderDecoder()) refuse("scene: --stack is for encoder-decoder models");
            if (stack != "encoder" && stack != "decoder" && stack != "cross")
                refuse(QStringLiteral("scene: %1 is an encoder-decoder model: --stack encoder, "
                                      "decoder or cross is required")
                           .arg(QString::fromLatin1(model::familyName(config.family))));
            std::vector<std::string> targetLabels;
            const std::vector<long long> decoderIds = decoderInputFromOptions(
                parser, "scene", directory, folder.model(), ids, options, targetLabels);
            const model::Model& whole = folder.model();
            const model::Model& stackModel = stack == "encoder" ? whole : *whole.decoder;
            if (layer < 0 || layer >= stackModel.config.layers)
                refuse(QStringLiteral("scene: --layer: expected 0 to %1, got %2")
                           .arg(stackModel.config.layers - 1)
                           .arg(layer));
            const model::EncoderDecoderRun<double> run =
                model::runEncoderDecoder<double>(whole, ids, decoderIds, options);
            const Scene scene =
                stack == "encoder" ? model::layerScene(whole, run.encoder, layer, labels)
                : stack == "decoder"
                    ? model::layerScene(stackModel, run.decoder, layer, targetLabels)
                    : model::crossLayerScene(stackModel, run.decoder, run.encoder, layer,
                                             targetLabels, labels);
            io::writeFileAtomically(parser.value("output"), io::sceneToJson(scene));
            return kSuccess;
        }
        const int layers = folder.model().config.layers;
        if (layer < 0 || layer >= layers) {
            refuse(QStringLiteral("scene: --layer: expected 0 to %1, got %2")
                       .arg(layers - 1)
                       .arg(layer));
        }
        model::checkInputs(folder.model().config, ids, options);
        model::checkRunFitsInMemory(
            folder.model(),
            model::runMemory(folder.model(), static_cast<long long>(ids.size()), sizeof(double))
                .total(),
            "the model in double");
        // In double, as export computes: the scene's embeddings are this run's residual stream.
        const model::ModelRun<double> run = model::runModel<double>(folder.model(), ids, options);
        const Scene scene = model::layerScene(folder.model(), run, layer, labels);
        io::writeFileAtomically(parser.value("output"), io::sceneToJson(scene));
    } catch (const model::ModelError& error) {
        const QString message = QString::fromStdString(error.what());
        refuse(message.startsWith(directory) ? message : directory + ": " + message);
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
