#include "cli/analyse_command.h"

#include <QCommandLineParser>

#include "cli/command_support.h"
#include "cli/run_command.h"
#include "core/model/workbench.h"
#include "io/formats/result_export.h"
#include "io/model/analysis_result.h"
#include "io/model/model_folder.h"

namespace ae::cli {
namespace {

struct Arguments {
    model::Analysis mode = model::Analysis::Lens;
    std::vector<long long> ids;
    std::vector<long long> corruptIds;  // patch
    std::vector<long long> targets;
    long long foil = -1;
    int position = -1;
    int top = 5;
};

template <typename Scalar>
QByteArray analyse(const model::Model& model, const Arguments& a) {
    const model::Config& c = model.config;
    model::requireAnalysis(c, a.mode);
    if (a.mode == model::Analysis::Composition)
        return io::compositionJson(c, model::compositionScores(model));
    if (a.mode == model::Analysis::Patching)
        return io::patchingJson(
            c, a.ids, a.corruptIds,
            model::activationPatching<Scalar>(model, a.ids, a.corruptIds, a.position,
                                              a.targets.front(), a.foil));
    const model::ModelRun<Scalar> run = model::runModel<Scalar>(model, a.ids);
    switch (a.mode) {
        case model::Analysis::Lens:
            return io::lensJson(c, a.ids, model::logitLens(model, run, a.targets, a.top));
        case model::Analysis::Attribution:
            return io::attributionJson(
                c, a.ids,
                model::directLogitAttribution(model, run, a.position, a.targets.front(), a.foil));
        case model::Analysis::ValueNorms:
            return io::valueNormsJson(c, a.ids, model::valueNorms(model, run));
        default:
            break;
    }
    return {};
}

}  // namespace

int analyseCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Analyse a whole model on one text (docs/workbench.md): the logit lens (lens), direct "
        "logit attribution (dla), activation patching (patch), value-weighted attention norms with "
        "attention sinks "
        "(value_norms), or the heads' Q-, K- and V-composition scores (composition), written in "
        "shared/reference/analysis_reference.py's result format.");
    parser.addHelpOption();
    parser.addPositionalArgument("mode", "lens, dla, patch, value_norms or composition.");
    parser.addPositionalArgument("model", "A Hugging Face model folder, or builtin:NAME.");
    parser.addOptions({
        {"ids", "The token ids, e.g. 464,3290,3332.", "ids"},
        {"text", "The text, tokenized with the folder's tokenizer.", "text"},
        {"corrupt-ids", "patch: the corrupted text's ids, as many as --ids.", "ids"},
        {"corrupt-text", "patch: the corrupted text.", "text"},
        {"position",
         "dla, patch: the position of the logits (default the last; negative counts from "
         "the end).",
         "P"},
        {"target",
         "dla, patch: the token whose logit is explained; lens: tokens followed at every "
         "layer and position, e.g. 5,9.",
         "ids"},
        {"foil", "dla, patch: a second token; the logit difference target − foil is explained.",
         "id"},
        {"top", "lens: how many top tokens each position lists (default 5).", "K"},
        {"double", "Compute in double instead of float."},
        {{"o", "output"}, "The result JSON.", "out"},
    });
    if (!parser.parse(arguments)) refuse("analyse: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 2) refuse("analyse: give MODE and MODEL_DIR");
    Arguments a;
    const QString mode = positional[0];
    const std::vector<std::pair<QString, model::Analysis>> modes = {
        {"lens", model::Analysis::Lens},
        {"dla", model::Analysis::Attribution},
        {"patch", model::Analysis::Patching},
        {"value_norms", model::Analysis::ValueNorms},
        {"composition", model::Analysis::Composition}};
    bool known = false;
    for (const auto& [name, analysis] : modes) {
        if (name == mode) {
            a.mode = analysis;
            known = true;
        }
    }
    if (!known)
        refuse("analyse: MODE must be lens, dla, patch, value_norms or composition, got " + mode);
    if (!parser.isSet("output")) refuse("analyse: -o OUT.json is required");
    const bool composition = a.mode == model::Analysis::Composition;
    if (composition && (parser.isSet("ids") || parser.isSet("text")))
        refuse("analyse: composition reads the weights alone: leave out --ids and --text");
    if (!composition && parser.isSet("ids") == parser.isSet("text"))
        refuse("analyse: give --ids 1,2,3 or --text TEXT");
    if (parser.isSet("target"))
        a.targets = integerList(parser.value("target"), "--target", "analyse");
    const bool patching = a.mode == model::Analysis::Patching;
    const bool attribution = a.mode == model::Analysis::Attribution || patching;
    if (attribution && a.targets.size() != 1)
        refuse(QStringLiteral("analyse: %1 needs one --target token").arg(mode));
    if (!attribution && a.mode != model::Analysis::Lens && !a.targets.empty())
        refuse("analyse: --target is for lens, dla and patch");
    for (const char* option : {"foil", "position"})
        if (parser.isSet(option) && !attribution)
            refuse(QStringLiteral("analyse: --%1 is for dla and patch").arg(QLatin1String(option)));
    if (patching && parser.isSet("corrupt-ids") == parser.isSet("corrupt-text"))
        refuse("analyse: patch needs --corrupt-ids 1,2,3 or --corrupt-text TEXT");
    if (!patching && (parser.isSet("corrupt-ids") || parser.isSet("corrupt-text")))
        refuse("analyse: --corrupt-ids and --corrupt-text are for patch");
    if (parser.isSet("top") && a.mode != model::Analysis::Lens)
        refuse("analyse: --top is for lens");
    const auto single = [&](const char* option) {
        const std::vector<long long> values = integerList(parser.value(QLatin1String(option)),
                                                          QStringLiteral("--") + option, "analyse");
        if (values.size() != 1)
            refuse(QStringLiteral("analyse: --%1: expected one integer").arg(option));
        return values.front();
    };
    if (parser.isSet("foil")) a.foil = single("foil");
    if (parser.isSet("position"))
        a.position =
            static_cast<int>(std::clamp<long long>(single("position"), -(1LL << 30), 1LL << 30));
    if (parser.isSet("top"))
        a.top = static_cast<int>(std::clamp<long long>(single("top"), -1, 1LL << 30));
    const QString directory = modelFolderArgument(positional[1], "analyse");
    try {
        const io::ModelFolder folder(directory);
        if (!composition)
            a.ids = parser.isSet("ids") ? integerList(parser.value("ids"), "--ids", "analyse")
                                        : tokenizeForRun(directory, parser.value("text"), nullptr);
        if (patching)
            a.corruptIds =
                parser.isSet("corrupt-ids")
                    ? integerList(parser.value("corrupt-ids"), "--corrupt-ids", "analyse")
                    : tokenizeForRun(directory, parser.value("corrupt-text"), nullptr);
        const QByteArray json = parser.isSet("double") ? analyse<double>(folder.model(), a)
                                                       : analyse<float>(folder.model(), a);
        io::writeFileAtomically(parser.value("output"), json);
    } catch (const model::ModelError& error) {
        const QString message = QString::fromStdString(error.what());
        refuse(message.startsWith(directory) ? message : directory + ": " + message);
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
