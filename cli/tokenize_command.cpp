#include "cli/tokenize_command.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <cstdio>
#include <string>

#include "cli/command_support.h"
#include "io/tokenizer/tokenizer.h"

namespace ae::cli {
namespace {

void printIds(const std::vector<int>& ids) {
    std::string line = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i > 0) line += ',';
        line += std::to_string(ids[i]);
    }
    line += "]\n";
    std::fputs(line.c_str(), stdout);
}

// FILE's lines, each a JSON string (so that any text, line breaks included, fits on one line).
QStringList readJsonLines(const QString& fileName) {
    QFile file;
    const bool opened = fileName == "-"
                            ? file.open(stdin, QIODevice::ReadOnly)
                            : (file.setFileName(fileName), file.open(QIODevice::ReadOnly));
    if (!opened) refuse("tokenize: " + fileName + ": cannot open: " + file.errorString());
    QList<QByteArray> lines = file.readAll().split('\n');
    if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
    QStringList texts;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        QJsonParseError error;
        const QJsonDocument document =
            QJsonDocument::fromJson(io::escapeByteOrderMarks("[" + lines[i] + "]"), &error);
        const QJsonArray array = document.array();
        if (error.error != QJsonParseError::NoError || array.size() != 1 || !array.at(0).isString())
            refuse(QStringLiteral("tokenize: %1: line %2: expected a JSON string such as "
                                  "\"Hello world\"")
                       .arg(fileName)
                       .arg(i + 1));
        texts.push_back(array.at(0).toString());
    }
    return texts;
}

}  // namespace

int tokenizeCommand(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Print the token ids of a text, as the model's tokenizer makes them.");
    parser.addHelpOption();
    parser.addPositionalArgument(
        "tokenizer",
        "A model folder (or builtin:NAME), or tokenizer.json, vocab.json/merges.txt or "
        "vocab.txt.");
    parser.addOptions({
        {"text", "The text to tokenize.", "text"},
        {"lines", "A file of JSON strings, one a line (- for standard input).", "file"},
        {"no-special", "Leave out the special tokens the post-processor adds (BOS, [CLS] ...)."},
    });
    if (!parser.parse(arguments)) refuse("tokenize: " + parser.errorText());
    if (parser.isSet("help")) {
        printLine(stdout, parser.helpText());
        return kSuccess;
    }
    const QStringList positional = parser.positionalArguments();
    if (positional.size() != 1) refuse("tokenize: give one MODEL_DIR or TOKENIZER_FILE");
    if (parser.isSet("text") == parser.isSet("lines"))
        refuse("tokenize: give --text TEXT or --lines FILE");
    const QString source = modelFolderArgument(positional.first(), "tokenize");
    const bool addSpecial = !parser.isSet("no-special");
    const QStringList texts = parser.isSet("text") ? QStringList{parser.value("text")}
                                                   : readJsonLines(parser.value("lines"));
    try {
        const io::Tokenizer tokenizer = io::Tokenizer::load(source);
        for (const QString& text : texts)
            printIds(tokenizer.encode(text, addSpecial));
    } catch (const io::TokenizerError& error) {
        refuse("tokenize: " + QString::fromUtf8(error.what()));
    }
    std::fflush(stdout);
    return kSuccess;
}

}  // namespace ae::cli
