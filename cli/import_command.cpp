#include "cli/import_command.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QString>
#include <cstdio>
#include <stdexcept>

#include "cli/command_support.h"
#include "io/formats/result_export.h"
#include "io/formats/safetensors.h"
#include "io/model/model_import.h"
#include "io/scene/scene_file.h"

namespace ae::cli {
namespace {}  // namespace

int importCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Build a scene from one attention layer of a model in a .safetensors file.");
    parser.addHelpOption();
    parser.addPositionalArgument("model", "The .safetensors file.");
    parser.addOptions({
        {"list", "Print the file's tensors (name, dtype, shape) and exit."},
        {"qkv", "Fused Q, K, V weight (GPT-2: h.0.attn.c_attn.weight).", "name"},
        {"qkv-bias", "Fused Q, K, V bias.", "name"},
        {"query", "W_Q.", "name"},
        {"key", "W_K.", "name"},
        {"value", "W_V.", "name"},
        {"query-bias", "b_Q.", "name"},
        {"key-bias", "b_K.", "name"},
        {"value-bias", "b_V.", "name"},
        {"output", "W_O (GPT-2: h.0.attn.c_proj.weight).", "name"},
        {"output-bias", "b_O.", "name"},
        {"layout", "xw ([in, out], GPT-2 Conv1D; default) or linear ([out, in], nn.Linear).",
         "layout", "xw"},
        {"embeddings", "The token table, vocab x dModel (GPT-2: wte.weight).", "name"},
        {"rows", "Token ids: the rows of the table, in order, e.g. 464,3290,3332.", "ids"},
        {"vocab", "Token labels: one per line, or a JSON object token -> id.", "file"},
        {"positions", "Learned positions (GPT-2: wpe.weight).", "name"},
        {"norm-weight", "Layer norm weight before the layer (GPT-2: h.0.ln_1.weight).", "name"},
        {"norm-bias", "Layer norm bias (GPT-2: h.0.ln_1.bias).", "name"},
        {"heads", "Number of heads; must divide the projection width.", "h"},
        {"causal", "Causal mask (GPT-2 and other decoders)."},
        {{"o", "output-file"}, "The scene file to write.", "scene"},
    });
    if (!parser.parse(arguments)) refuse("import: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("import: give one MODEL.safetensors");
    const QString model = positional.first();

    try {
        const io::SafetensorsFile file(model);
        if (parser.isSet("list")) {
            for (const io::TensorInfo& t : file.tensors())
                printLine(stdout, t.name + '\t' + t.dtype + '\t' + io::shapeText(t.shape));
            return kSuccess;
        }
        io::ModelImportSpec spec;
        const QString layout = parser.value("layout");
        if (layout != "xw" && layout != "linear")
            refuse("import: --layout: expected xw or linear, got " + layout);
        spec.layout = layout == "xw" ? io::WeightLayout::XW : io::WeightLayout::Linear;
        spec.qkv = parser.value("qkv");
        spec.qkvBias = parser.value("qkv-bias");
        spec.query = parser.value("query");
        spec.key = parser.value("key");
        spec.value = parser.value("value");
        spec.queryBias = parser.value("query-bias");
        spec.keyBias = parser.value("key-bias");
        spec.valueBias = parser.value("value-bias");
        spec.output = parser.value("output");
        spec.outputBias = parser.value("output-bias");
        if (!parser.isSet("embeddings")) refuse("import: --embeddings NAME is required");
        spec.embeddings = parser.value("embeddings");
        if (!parser.isSet("rows")) refuse("import: --rows IDS is required");
        spec.tokenIds = io::parseTokenIds(parser.value("rows"));
        spec.vocabularyFile = parser.value("vocab");
        spec.positions = parser.value("positions");
        spec.normWeight = parser.value("norm-weight");
        spec.normBias = parser.value("norm-bias");
        if (!parser.isSet("heads")) refuse("import: --heads H is required");
        bool ok = false;
        spec.heads = parser.value("heads").toInt(&ok);
        if (!ok || spec.heads < 1)
            refuse("import: --heads: expected a positive integer, got " + parser.value("heads"));
        spec.causal = parser.isSet("causal");
        if (!parser.isSet("output-file")) refuse("import: -o SCENE.json is required");
        spec.title = "Imported from " + QFileInfo(model).fileName();

        const Scene scene = io::importModel(io::tensorReader(file), spec);
        // A scene `export` could not compute is refused before its text is made.
        checkFitsInMemory(scene, sizeof(double));
        const QByteArray json = io::sceneToJson(scene);
        // What the window and `export` will read back must be valid: check it the same way.
        io::parseScene(json);
        io::writeFileAtomically(parser.value("output-file"), json);
        printLine(stdout, QStringLiteral("%1 tokens, dModel %2, dProj %3, %4 heads%5")
                              .arg(scene.queryCount())
                              .arg(scene.dModel())
                              .arg(scene.dProj())
                              .arg(scene.heads)
                              .arg(scene.projections.hasOutput
                                       ? QStringLiteral(", dOut %1").arg(scene.dOut())
                                       : QString()));
    } catch (const io::ModelImportError& error) {
        // The reader's own messages start with the file name; the importer's are about tensors.
        refuse("import: " + model + ": " + QString::fromUtf8(error.what()));
    } catch (const io::MatrixFileError& error) {
        refuse("import: " + QString::fromUtf8(error.what()));
    } catch (const SceneError& error) {
        refuse("import: " + model + ": " + QString::fromStdString(error.what()));
    } catch (const io::WriteError& error) {
        refuse(QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
