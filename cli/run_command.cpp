#include "cli/run_command.h"

#include <QCommandLineParser>
#include <stdexcept>

#include "cli/command_support.h"
#include "io/model_folder.h"
#include "io/model_result.h"
#include "io/result_export.h"

namespace ae::cli {
namespace {

// "1,2,3" → {1, 2, 3}; spaces around the numbers and empty parts ("1,2,") are allowed, as the
// reference's --ids reads them; nothing else.
std::vector<long long> integerList(const QString& text, const QString& option) {
    std::vector<long long> values;
    for (const QString& part : text.split(',')) {
        if (part.trimmed().isEmpty()) continue;
        bool ok = false;
        const long long v = part.trimmed().toLongLong(&ok);
        if (!ok) {
            refuse(QStringLiteral("run: %1: expected comma-separated integers, got \"%2\"")
                       .arg(option, part.trimmed()));
        }
        values.push_back(v);
    }
    return values;
}

template <typename Scalar>
void runAndWrite(const model::Model& model, const std::vector<long long>& ids,
                 const model::RunOptions& options, bool json, const QString& output) {
    // Checked here with the result's text on top (~24 bytes a number; npy writes one matrix at a
    // time), before anything the size of the run exists.
    model::checkInputs(model.config, ids, options);
    const model::RunMemory need =
        model::runMemory(model, static_cast<long long>(ids.size()), sizeof(Scalar));
    model::checkRunFitsInMemory(
        model, need.total() + (json ? 24.0 * need.keptNumbers : 0.0),
        std::string(sizeof(Scalar) == 4 ? "the model in float" : "the model in double") +
            (json ? " and the result file" : ""));
    const model::ModelRun<Scalar> run = model::runModel<Scalar>(model, ids, options);
    if (json) {
        io::writeFileAtomically(output, io::modelResultJson(run));
    } else {
        io::writeModelNpyDirectory(run, output);
    }
}

}  // namespace

std::vector<long long> tokenizeForRun(const QString& modelDirectory, const QString& text) {
    // The tokenizer (issue 15, io/tokenizer*) is wired in here once it is merged.
    Q_UNUSED(modelDirectory);
    Q_UNUSED(text);
    refuse("run: --text needs the tokenizer, which this build does not have yet; give --ids");
}

int runModelCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Run a whole model (gpt2, bert, llama, qwen3) on one sequence and write every layer's "
        "residual input, every head's q, k, v, scores and weights, and the logits (or bert's "
        "last hidden state).");
    parser.addHelpOption();
    parser.addPositionalArgument("model",
                                 "A Hugging Face model folder (config.json and "
                                 "model.safetensors or its shards).");
    parser.addOptions({
        {"text", "The text, tokenized with the folder's tokenizer.", "text"},
        {"ids", "Token ids instead of text, e.g. 464,3290,3332.", "ids"},
        {"attention-mask",
         "1 for a token, 0 for padding, one per token (as Hugging Face's "
         "attention_mask).",
         "mask"},
        {{"o", "output"}, "The result file (json) or folder (npy).", "out"},
        {"double", "Compute in double instead of float."},
        {"format", "json (default: the reference's model-result format) or npy.", "format", "json"},
    });
    if (!parser.parse(arguments)) refuse("run: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("run: give one MODEL_DIR");
    if (parser.isSet("text") == parser.isSet("ids")) refuse("run: give --text TEXT or --ids 1,2,3");
    if (!parser.isSet("output")) refuse("run: -o OUT is required");
    const QString format = parser.value("format");
    if (format != "json" && format != "npy")
        refuse("run: --format: expected json or npy, got " + format);
    const QString directory = positional.first();

    try {
        const io::ModelFolder folder(directory);
        const std::vector<long long> ids = parser.isSet("ids")
                                               ? integerList(parser.value("ids"), "--ids")
                                               : tokenizeForRun(directory, parser.value("text"));
        model::RunOptions options;
        if (parser.isSet("attention-mask")) {
            for (long long a : integerList(parser.value("attention-mask"), "--attention-mask")) {
                if (a != 0 && a != 1) refuse("run: --attention-mask: values must be 0 or 1");
                options.attentionMask.push_back(static_cast<int>(a));
            }
        }
        const bool json = format == "json";
        if (parser.isSet("double")) {
            runAndWrite<double>(folder.model(), ids, options, json, parser.value("output"));
        } else {
            runAndWrite<float>(folder.model(), ids, options, json, parser.value("output"));
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

}  // namespace ae::cli
