#include "cli/heads_command.h"

#include <QCommandLineParser>
#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

#include "cli/command_support.h"
#include "cli/run_command.h"
#include "core/model/head_scores.h"
#include "core/model/model_analysis.h"
#include "core/model/workbench.h"
#include "io/formats/json_numbers.h"
#include "io/model/model_folder.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::cli {
namespace {

// `count` ids uniform over [0, vocab) without `excluded` (-1: none), by rejection on
// mt19937_64, whose output the standard fixes: the same seed gives the same ids everywhere
// (std::uniform_int_distribution's algorithm is the library's choice).
std::vector<long long> randomIds(int count, long long vocab, long long excluded,
                                 unsigned long long seed) {
    std::mt19937_64 random(seed);
    const unsigned long long choices = static_cast<unsigned long long>(vocab - (excluded >= 0));
    const unsigned long long limit = std::mt19937_64::max() - std::mt19937_64::max() % choices;
    std::vector<long long> ids;
    for (int i = 0; i < count; ++i) {
        unsigned long long draw = random();
        while (draw >= limit)
            draw = random();
        long long id = static_cast<long long>(draw % choices);
        if (excluded >= 0 && id >= excluded) ++id;
        ids.push_back(id);
    }
    return ids;
}

// Every head's scores, layers·heads rows: the repeated-run ones (induction) from `repeated`, the
// others from `ids`.
struct Measured {
    std::vector<model::HeadSummary> heads;
    long long tokens = 0, repeatedTokens = 0;
};

template <typename Scalar>
// `separator`: the tokenizer's [SEP] / </s> (-1: none), whose positions the to-[SEP] score reads.
Measured measure(const model::Model& model, const std::vector<long long>& ids,
                 const std::vector<long long>& repeated, int prefix, int period,
                 long long separator) {
    Measured m;
    auto optionsFor = [&](const std::vector<long long>& tokens) {
        model::RunOptions options;
        for (std::size_t i = 0; i < tokens.size(); ++i)
            if (separator >= 0 && tokens[i] == separator)
                options.separators.push_back(static_cast<int>(i));
        return options;
    };
    m.tokens = static_cast<long long>(ids.size());
    m.repeatedTokens = static_cast<long long>(repeated.size());
    const model::ModelRun<Scalar> repeatedRun = [&] {
        try {
            return model::runModel<Scalar>(model, repeated, optionsFor(repeated));
        } catch (const model::ModelError& error) {
            // The repeated sequence is the command's, not the user's: say why it is that long.
            throw model::ModelError(std::string("the induction score runs the tokens repeated "
                                                "twice: ") +
                                    error.what());
        }
    }();
    std::optional<model::ModelRun<Scalar>> own;
    const model::ModelRun<Scalar>& run =
        ids == repeated ? repeatedRun
                        : own.emplace(model::runModel<Scalar>(model, ids, optionsFor(ids)));
    m.heads = model::summarizeHeads(run);
    model::addValueNormScores(m.heads, model, run);
    model::addRepeatedRunScores(m.heads, repeatedRun, prefix, period);
    return m;
}

void appendScore(QByteArray& line, double value) {
    if (std::isfinite(value)) {
        io::json::appendNumber(line, value);
    } else {
        line.append("null");  // a score no row defines (previous token on one token)
    }
}

// `stack`: an encoder–decoder model's kind of head (encoder, decoder, cross), the line's first key;
// empty for other models.
QByteArray jsonLine(const model::HeadSummary& s, const QString& stack = {}) {
    QByteArray line = "{";
    if (!stack.isEmpty()) line.append("\"stack\":\"").append(stack.toUtf8()).append("\",");
    line.append("\"layer\":" + QByteArray::number(s.layer) +
                ",\"head\":" + QByteArray::number(s.head));
    for (const model::HeadScore& score : model::headScores()) {
        line.append(",\"").append(score.key).append("\":");
        appendScore(line, s.*score.value);
    }
    line.append('}');
    return line;
}

// "layer", "head" and every score's key: the JSON's keys and the table's columns, in order.
QStringList columnNames() {
    QStringList names = {"layer", "head"};
    for (const model::HeadScore& score : model::headScores())
        names << QString::fromUtf8(score.key);
    return names;
}

// The positions of `separator` in `ids` (-1: none), which the to-[SEP] score reads.
std::vector<int> separatorPositions(const std::vector<long long>& ids, long long separator) {
    std::vector<int> positions;
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (separator >= 0 && ids[i] == separator) positions.push_back(static_cast<int>(i));
    return positions;
}

// An encoder–decoder model's three kinds of heads, in order: the encoder's self-attention, the
// decoder's, and the decoder's cross-attention, each layer by layer. Induction is not measured
// (NaN): it needs a text repeated twice in one sequence.
struct StackHeads {
    QString stack;
    std::vector<model::HeadSummary> heads;
};
template <typename Scalar>
std::vector<StackHeads> measureEncoderDecoder(const model::Model& model,
                                              const std::vector<long long>& ids,
                                              const std::vector<long long>& decoderIds,
                                              long long separator) {
    model::RunOptions options;
    options.separators = separatorPositions(ids, separator);
    model::EncoderDecoderRun<Scalar> run =
        model::runEncoderDecoder<Scalar>(model, ids, decoderIds, options);
    run.decoder.options.separators = separatorPositions(decoderIds, separator);
    std::vector<StackHeads> stacks{
        {"encoder", model::summarizeHeads(run.encoder)},
        {"decoder", model::summarizeHeads(run.decoder)},
        {"cross", model::summarizeCrossHeads(*model.decoder, run.decoder, options.separators)}};
    model::addValueNormScores(stacks[0].heads, model, run.encoder);
    model::addValueNormScores(stacks[1].heads, *model.decoder, run.decoder);
    return stacks;
}

QString cell(double value, int width) {
    return std::isfinite(value) ? QString::number(value, 'f', 4).rightJustified(width)
                                : QStringLiteral("n/a").rightJustified(width);
}

// `heads` on an encoder–decoder model: its source (--text or --ids) and decoder input, three
// kinds of heads, each line with its stack.
int encoderDecoderHeads(const QCommandLineParser& parser, const QString& directory,
                        const model::Model& model, bool randomText) {
    const model::Config& config = model.config;
    if (randomText)
        refuse(QStringLiteral("heads: --induction-random measures one sequence repeated twice; "
                              "%1 is an encoder-decoder model: give its source (--text or --ids) "
                              "and decoder input (--decoder-ids, --target-text or --generate N)")
                   .arg(QString::fromLatin1(model::familyName(config.family))));
    const std::vector<long long> ids =
        parser.isSet("ids") ? integerList(parser.value("ids"), "--ids", "heads")
                            : tokenizeForRun(directory, parser.value("text"), nullptr);
    std::vector<std::string> targetLabels;
    const std::vector<long long> decoderIds =
        decoderInputFromOptions(parser, "heads", directory, model, ids, {}, targetLabels);
    long long separator = -1;
    try {
        separator = io::Tokenizer::load(directory).separatorToken();
    } catch (const io::TokenizerError&) {
    }
    const std::vector<StackHeads> stacks =
        parser.isSet("double") ? measureEncoderDecoder<double>(model, ids, decoderIds, separator)
                               : measureEncoderDecoder<float>(model, ids, decoderIds, separator);
    if (parser.isSet("json")) {
        for (const StackHeads& stack : stacks)
            for (const model::HeadSummary& s : stack.heads)
                printLine(stdout, QString::fromUtf8(jsonLine(s, stack.stack)));
        return kSuccess;
    }
    printLine(stdout, QStringLiteral("%1: encoder %2 x %3 heads on %4 source token(s), decoder "
                                     "%5 x %6 on %7 decoder token(s), cross-attention the same; "
                                     "induction not measured")
                          .arg(directory)
                          .arg(config.layers)
                          .arg(config.heads)
                          .arg(ids.size())
                          .arg(model.decoder->config.layers)
                          .arg(model.decoder->config.heads)
                          .arg(decoderIds.size()));
    QStringList columns = QStringList{"stack"} + columnNames();
    const auto width = [&](int column) { return std::max(7, int(columns[column].size())); };
    QStringList header;
    for (int c = 0; c < columns.size(); ++c)
        header << (c == 0 ? columns[c].leftJustified(7)
                          : columns[c].rightJustified(c < 3 ? int(columns[c].size()) : width(c)));
    printLine(stdout, header.join("  "));
    const std::vector<model::HeadScore>& scores = model::headScores();
    for (const StackHeads& stack : stacks) {
        for (const model::HeadSummary& s : stack.heads) {
            QStringList line = {stack.stack.leftJustified(7),
                                QString::number(s.layer).rightJustified(int(columns[1].size())),
                                QString::number(s.head).rightJustified(int(columns[2].size()))};
            for (size_t i = 0; i < scores.size(); ++i)
                line << cell(s.*scores[i].value, width(3 + int(i)));
            printLine(stdout, line.join("  "));
        }
    }
    return kSuccess;
}

}  // namespace

int headsCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Summarise every head of a whole model, one line a head, layer by layer: the mean "
        "entropy of its weight rows (nats), its mean weight on the first token, on the previous "
        "token and on itself, and its induction score (TransformerLens's: the text repeated "
        "twice, the weight from each token of the second copy to the token after its first "
        "occurrence). docs/models.md, \"Head summaries\", has the formulas.");
    parser.addHelpOption();
    const QStringList keys = columnNames();
    parser.addPositionalArgument("model", "A Hugging Face model folder, or builtin:NAME.");
    parser.addOptions({
        {"text", "The text, tokenized with the folder's tokenizer.", "text"},
        {"ids", "Token ids instead of text, e.g. 464,3290,3332.", "ids"},
        {"induction-random",
         "Measure every score on N random token ids repeated twice, after the model's BOS.", "N"},
        {"seed", "The seed of --induction-random's ids (default 0).", "S"},
        {"json", "One JSON object a line, with exactly the keys " +
                     keys.mid(0, keys.size() - 1).join(", ") + " and " + keys.last() + "."},
        {"double", "Compute in double instead of float."},
        {"decoder-ids",
         "Encoder-decoder models: the decoder input (teacher forced, from "
         "decoder_start_token_id); their encoder, decoder and cross-attention heads are "
         "summarized, each line with its stack.",
         "ids"},
        {"target-text", "Encoder-decoder models: the target text, as the decoder input.", "text"},
        {"generate", "Encoder-decoder models: the decoder input greedy decoding produces.", "N"},
    });
    if (!parser.parse(arguments)) refuse("heads: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("heads: give one MODEL_DIR");
    const int sources = int(parser.isSet("text")) + int(parser.isSet("ids")) +
                        int(parser.isSet("induction-random"));
    if (sources != 1) refuse("heads: give one of --text TEXT, --ids 1,2,3 or --induction-random N");
    const bool randomText = parser.isSet("induction-random");
    if (parser.isSet("seed") && !randomText) refuse("heads: --seed goes with --induction-random");
    bool ok = true;
    const int period = randomText ? parser.value("induction-random").toInt(&ok) : 0;
    if (!ok || (randomText && period < 1)) {
        refuse("heads: --induction-random: expected a positive integer, got " +
               parser.value("induction-random"));
    }
    const unsigned long long seed =
        parser.isSet("seed") ? parser.value("seed").toULongLong(&ok) : 0;
    if (!ok) refuse("heads: --seed: expected a non-negative integer, got " + parser.value("seed"));
    const QString directory = modelFolderArgument(positional.first(), "heads");

    try {
        const io::ModelFolder folder(directory);
        const model::Config& config = folder.model().config;
        const bool decoderInput =
            parser.isSet("decoder-ids") || parser.isSet("target-text") || parser.isSet("generate");
        if (decoderInput && !config.isEncoderDecoder())
            refuse(QStringLiteral("heads: --decoder-ids, --target-text and --generate are for "
                                  "encoder-decoder models (%1)")
                       .arg(QString::fromStdString(model::encoderDecoderFamilyNames())));
        if (config.isEncoderDecoder())
            return encoderDecoderHeads(parser, directory, folder.model(), randomText);
        std::vector<long long> ids;
        int prefix = 0;
        if (randomText) {
            if (config.bosToken >= 0) {
                ids.push_back(config.bosToken);
                prefix = 1;
            }
            if (config.vocab - prefix < 1) refuse("heads: the vocabulary is only the BOS token");
            for (long long id : randomIds(period, config.vocab, config.bosToken, seed))
                ids.push_back(id);
        } else if (parser.isSet("ids")) {
            ids = integerList(parser.value("ids"), "--ids", "heads");
        } else {
            ids = tokenizeForRun(directory, parser.value("text"), nullptr);
            prefix = config.bosToken >= 0 && !ids.empty() && ids.front() == config.bosToken;
        }
        // The ids are checked as given before they are repeated, so that a refusal names them.
        model::checkInputs(config, ids, {});
        const std::vector<long long> body(ids.begin() + prefix, ids.end());
        if (body.empty()) refuse("heads: " + directory + ": the text is only the BOS token");
        std::vector<long long> repeated(ids.begin(), ids.begin() + prefix);
        repeated.insert(repeated.end(), body.begin(), body.end());
        repeated.insert(repeated.end(), body.begin(), body.end());
        const std::vector<long long>& measured = randomText ? repeated : ids;
        const int bodyLength = static_cast<int>(body.size());
        // The to-[SEP] score needs the tokenizer's separator; a folder without a readable
        // tokenizer has none, and the score is n/a.
        long long separator = -1;
        try {
            separator = io::Tokenizer::load(directory).separatorToken();
        } catch (const io::TokenizerError&) {
        }
        const Measured m =
            parser.isSet("double")
                ? measure<double>(folder.model(), measured, repeated, prefix, bodyLength, separator)
                : measure<float>(folder.model(), measured, repeated, prefix, bodyLength, separator);

        if (parser.isSet("json")) {
            for (const model::HeadSummary& s : m.heads)
                printLine(stdout, QString::fromUtf8(jsonLine(s)));
            return kSuccess;
        }
        printLine(stdout, QStringLiteral("%1: %2 layers x %3 heads, scores on %4 token(s), "
                                         "induction on %5 (%6 repeated twice%7)")
                              .arg(directory)
                              .arg(config.layers)
                              .arg(config.heads)
                              .arg(m.tokens)
                              .arg(m.repeatedTokens)
                              .arg(bodyLength)
                              .arg(prefix ? QStringLiteral(" after BOS") : QString()));
        // Each column as wide as its name, and at least as a number (0.0000, 12.3456).
        const QStringList& columns = keys;
        const auto width = [&](int column) { return std::max(7, int(columns[column].size())); };
        QStringList header;
        for (int c = 0; c < columns.size(); ++c)
            header << columns[c].rightJustified(c < 2 ? int(columns[c].size()) : width(c));
        printLine(stdout, header.join("  "));
        const std::vector<model::HeadScore>& scores = model::headScores();
        for (const model::HeadSummary& s : m.heads) {
            QStringList line = {QString::number(s.layer).rightJustified(int(columns[0].size())),
                                QString::number(s.head).rightJustified(int(columns[1].size()))};
            for (size_t i = 0; i < scores.size(); ++i)
                line << cell(s.*scores[i].value, width(2 + int(i)));
            printLine(stdout, line.join("  "));
        }
    } catch (const model::ModelError& error) {
        const QString message = QString::fromStdString(error.what());
        refuse(message.startsWith(directory) ? message : directory + ": " + message);
    }
    return kSuccess;
}

}  // namespace ae::cli
