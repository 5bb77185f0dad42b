#include "cli/rotary_command.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "cli/command_support.h"
#include "core/rotary_study.h"
#include "core/scene_error.h"

namespace ae::cli {
namespace {

int integerOption(const QCommandLineParser& parser, const QString& name, int fallback) {
    if (!parser.isSet(name)) return fallback;
    bool ok = false;
    const int value = parser.value(name).toInt(&ok);
    if (!ok) refuse("rotary: --" + name + ": expected an integer, got " + parser.value(name));
    return value;
}

double numberOption(const QCommandLineParser& parser, const QString& name, double fallback) {
    if (!parser.isSet(name)) return fallback;
    bool ok = false;
    const double value = parser.value(name).toDouble(&ok);
    if (!ok || !(value > 0))
        refuse("rotary: --" + name + ": expected a positive number, got " + parser.value(name));
    return value;
}

void printJson(const QJsonObject& o) {
    printLine(stdout, QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)));
}

}  // namespace

int rotaryCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "The numbers of Explain > Why rotary positions?, one JSON object a line.");
    parser.addHelpOption();
    addSceneArguments(parser);
    parser.addOption({"head", "The head (from 0).", "h", "0"});
    parser.addOption({"query", "The query's token row (from 0).", "i", "0"});
    parser.addOption({"key", "The key's token row (from 0).", "j", "0"});
    parser.addOption({"distances", "Query minus key positions, FROM:TO.", "range", "-64:64"});
    parser.addOption({"starts", "Where the earlier token sits, comma-separated.", "list", "0,50"});
    parser.addOption({"theta", "Rotary base θ (default: the scene's, else 10000).", "t"});
    parser.addOption({"scaling",
                      "none, linear, llama3 or longrope (the scene's own factors; default: the "
                      "scene's).",
                      "kind"});
    parser.addOption({"factor", "The scaling factor.", "f"});
    parser.addOption({"low-frequency-factor", "llama3's low frequency factor.", "l"});
    parser.addOption({"high-frequency-factor", "llama3's high frequency factor.", "h"});
    parser.addOption({"original-max-positions", "llama3's trained length.", "n"});
    if (!parser.parse(arguments)) refuse("rotary: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    QString label;
    const Scene scene = readSceneArgument(parser, "rotary", label);
    const int head = integerOption(parser, "head", 0);
    const int query = integerOption(parser, "query", 0);
    const int key = integerOption(parser, "key", 0);
    const auto rows = static_cast<int>(scene.tokens.size());
    const int keys = scene.hasSource ? static_cast<int>(scene.sourceTokens.size()) : rows;
    if (head < 0 || head >= scene.heads)
        refuse(QStringLiteral("rotary: --head %1: the scene has heads 0 to %2")
                   .arg(head)
                   .arg(scene.heads - 1));
    if (query < 0 || query >= rows)
        refuse(QStringLiteral("rotary: --query %1: the scene has rows 0 to %2")
                   .arg(query)
                   .arg(rows - 1));
    if (key < 0 || key >= keys)
        refuse(
            QStringLiteral("rotary: --key %1: the scene has keys 0 to %2").arg(key).arg(keys - 1));
    const QStringList range = parser.value("distances").split(':');
    bool fromOk = false, toOk = false;
    const int from = range.value(0).toInt(&fromOk), to = range.value(1).toInt(&toOk);
    if (range.size() != 2 || !fromOk || !toOk || from > to || to - from > 100000)
        refuse("rotary: --distances: expected FROM:TO with FROM <= TO, got " +
               parser.value("distances"));
    std::vector<int> starts;
    for (const QString& s : parser.value("starts").split(',')) {
        bool ok = false;
        const int start = s.toInt(&ok);
        if (!ok || start < 0 || start > 1000000)
            refuse("rotary: --starts: expected positions from 0, got " + parser.value("starts"));
        starts.push_back(start);
    }
    try {
        RotaryStudy study(scene, head, query, key);
        RopeParameters p = study.parameters();
        p.theta = numberOption(parser, "theta", p.theta);
        if (parser.isSet("scaling")) {
            const QString kind = parser.value("scaling");
            if (kind == "none") {
                p.scaling = RopeScaling::None;
            } else if (kind == "linear") {
                p.scaling = RopeScaling::Linear;
            } else if (kind == "llama3") {
                p.scaling = RopeScaling::Llama3;
            } else if (kind == "longrope" && !p.longRopeFactors.empty()) {
                p.scaling = RopeScaling::LongRope;
            } else if (kind == "longrope") {
                refuse(
                    "rotary: --scaling longrope needs the scene's own per-pair factors "
                    "(rotary.factors, as a Phi-3 layer has); this scene has none");
            } else {
                refuse("rotary: --scaling: expected none, linear, llama3 or longrope, got " + kind);
            }
        }
        p.factor = numberOption(parser, "factor", p.factor);
        p.lowFrequencyFactor = numberOption(parser, "low-frequency-factor", p.lowFrequencyFactor);
        p.highFrequencyFactor =
            numberOption(parser, "high-frequency-factor", p.highFrequencyFactor);
        p.originalMaxPositions =
            numberOption(parser, "original-max-positions", p.originalMaxPositions);
        if (p.scaling == RopeScaling::Llama3 && !(p.highFrequencyFactor > p.lowFrequencyFactor))
            refuse("rotary: --high-frequency-factor must be above --low-frequency-factor");
        study.setParameters(p);
        static const char* kScalings[] = {"none", "linear", "llama3", "longrope"};
        printJson(
            {{"scene_has_rotary", study.sceneHasRotary()},
             {"head_dim", study.headDim()},
             {"turned_dims", study.turnedDims()},
             {"parameters", QJsonObject{{"theta", p.theta},
                                        {"scaling", kScalings[static_cast<int>(p.scaling)]},
                                        {"factor", p.factor},
                                        {"low_frequency_factor", p.lowFrequencyFactor},
                                        {"high_frequency_factor", p.highFrequencyFactor},
                                        {"original_max_positions", p.originalMaxPositions}}}});
        const std::vector<double> wavelengths = study.wavelengths();
        const std::vector<double> unscaled = study.unscaledWavelengths();
        for (std::size_t i = 0; i < wavelengths.size(); ++i) {
            printJson({{"pair", static_cast<int>(i)},
                       {"wavelength", wavelengths[i]},
                       {"unscaled_wavelength", unscaled[i]}});
        }
        for (int start : starts) {
            const std::vector<TokenPositions> positions = positionsOverDistances(from, to, start);
            const std::vector<double> rotary = study.rotaryScores(positions);
            const std::vector<double> sinusoidal = study.sinusoidalScores(positions);
            for (std::size_t n = 0; n < positions.size(); ++n) {
                printJson({{"distance", positions[n].query - positions[n].key},
                           {"start", start},
                           {"query_position", positions[n].query},
                           {"key_position", positions[n].key},
                           {"rotary", rotary[n]},
                           {"sinusoidal", sinusoidal[n]}});
            }
        }
    } catch (const SceneError& error) {
        refuse(label + ": " + QString::fromStdString(error.what()));
    }
    return kSuccess;
}

}  // namespace ae::cli
