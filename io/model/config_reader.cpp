#include "io/model/config_reader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <cmath>

namespace ae::io {

using model::Activation;
using model::ModelError;

[[noreturn]] void failConfig(const QString& message) {
    throw ModelError(message.toStdString());
}

QString jsonText(const QJsonValue& v) {
    if (v.isString()) return '"' + v.toString() + '"';
    if (v.isNull() || v.isUndefined()) return "null";
    if (v.isBool()) return v.toBool() ? "true" : "false";
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 17);
    return QString::fromUtf8(
        QJsonDocument(v.isArray() ? QJsonDocument(v.toArray()) : QJsonDocument(v.toObject()))
            .toJson(QJsonDocument::Compact));
}

// Python's truthiness, for the reference's `cfg.get(...) or {}`.
bool falsy(const QJsonValue& v) {
    if (v.isNull() || v.isUndefined()) return true;
    if (v.isBool()) return !v.toBool();
    if (v.isDouble()) return v.toDouble() == 0;
    if (v.isString()) return v.toString().isEmpty();
    if (v.isArray()) return v.toArray().isEmpty();
    return v.toObject().isEmpty();
}

// The top-level keys of a JSON object text whose values are numbers written with a fraction or
// an exponent ("2.0", "1e3"): Python reads those as float, not int, and the reference refuses
// them where an integer belongs, but QJsonValue keeps an integral 2.0 as the integer 2. `text`
// has already parsed as a JSON object, so this scan needs no error handling.
QSet<QString> topLevelFloatLiterals(const QByteArray& text) {
    QSet<QString> keys;
    int depth = 0;
    QByteArray key;
    bool expectKey = false, afterColon = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (ch == '"') {
            const qsizetype start = ++i;
            while (i < text.size() && text[i] != '"')
                i += text[i] == '\\' ? 2 : 1;
            if (depth == 1 && expectKey) key = text.mid(start, i - start);
            expectKey = false;
            afterColon = false;
        } else if (ch == '{' || ch == '[') {
            ++depth;
            expectKey = ch == '{' && depth == 1;
            afterColon = false;
        } else if (ch == '}' || ch == ']') {
            --depth;
        } else if (ch == ',') {
            expectKey = depth == 1;
        } else if (ch == ':') {
            afterColon = depth == 1;
        } else if (afterColon && (ch == '-' || (ch >= '0' && ch <= '9'))) {
            qsizetype end = i;
            while (end < text.size() && QByteArrayView("+-.eE0123456789").contains(text[end]))
                ++end;
            const QByteArray literal = text.mid(i, end - i);
            // The key as QJsonDocument decodes it: parse the quoted text.
            const QString name = QJsonDocument::fromJson("[\"" + key + "\"]").array()[0].toString();
            if (literal.contains('.') || literal.contains('e') || literal.contains('E')) {
                keys.insert(name);
            } else {
                keys.remove(name);  // a later duplicate wins, as in Python
            }
            i = end - 1;
            afterColon = false;
        } else if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            afterColon = false;
        }
    }
    return keys;
}

// A JSON number that Python reads as an int: no fraction or exponent in its text.
bool isJsonInteger(const QJsonValue& v, const QSet<QString>& floatLiterals, const QString& name) {
    return v.isDouble() && v.toDouble() == std::floor(v.toDouble()) &&
           !floatLiterals.contains(name);
}

Activation activationNamed(const QString& name, const QString& file, const char* field,
                           bool fastGelu) {
    // activations.py ACT2FN; gelu_fast is FastGELUActivation (GPT-NeoX-20B), read by the newer
    // decoder families only
    if (name == "gelu") return Activation::GeluExact;
    if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::GeluTanh;
    if (fastGelu && name == "gelu_fast") return Activation::GeluFast;
    if (name == "silu" || name == "swish") return Activation::Silu;
    if (name == "relu") return Activation::Relu;
    failConfig(QStringLiteral("%1: %2 \"%3\" is not supported (gelu, gelu_new, "
                              "gelu_pytorch_tanh, %4silu, swish, relu)")
                   .arg(file, field, name, fastGelu ? "gelu_fast, " : ""));
}

}  // namespace ae::io
