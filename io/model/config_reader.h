#pragma once
// Reading config.json as Hugging Face's configuration classes do, after the reference's
// config_value: a field's first present, non-null name, type-checked, else the class default.
// Every refusal is a model::ModelError of one line naming the file and the field.

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QSet>
#include <QString>
#include <initializer_list>
#include <optional>
#include <utility>

#include "core/model/model.h"

namespace ae::io {

[[noreturn]] void failConfig(const QString& message);

// A JSON value as Python would print it in a message: "x", null, true, 2, [1,2].
QString jsonText(const QJsonValue& v);

// Python's truthiness, for the reference's `cfg.get(...) or {}`.
bool falsy(const QJsonValue& v);

// The top-level keys of a JSON object text whose values are numbers written with a fraction or
// an exponent ("2.0", "1e3"): Python reads those as float, not int, and the reference refuses
// them where an integer belongs, but QJsonValue keeps an integral 2.0 as the integer 2.
QSet<QString> topLevelFloatLiterals(const QByteArray& text);

// A JSON number that Python reads as an int: no fraction or exponent in its text.
bool isJsonInteger(const QJsonValue& v, const QSet<QString>& floatLiterals, const QString& name);

// The reference's config_value: the first of `names` present and not null, type-checked, else
// the default. `file` starts messages.
class ConfigReader {
public:
    ConfigReader(const QJsonObject& object, QString file, QSet<QString> floatLiterals = {})
        : o_(object), file_(std::move(file)), floatLiterals_(std::move(floatLiterals)) {}

    const QJsonObject& object() const { return o_; }
    const QString& file() const { return file_; }
    // The first of `names` present and not null, with its name.
    std::optional<std::pair<QString, QJsonValue>> first(
        std::initializer_list<const char*> names) const {
        for (const char* n : names) {
            const QJsonValue v = o_.value(QLatin1String(n));
            if (!v.isUndefined() && !v.isNull()) return std::make_pair(QString(n), v);
        }
        return std::nullopt;
    }
    int integer(std::initializer_list<const char*> names, int fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!isJsonInteger(v, floatLiterals_, name) || v.toInteger() < 1 ||
            v.toInteger() > 1'000'000'000) {
            failConfig(QStringLiteral("%1: %2 must be a positive integer, got %3")
                           .arg(file_, name, jsonText(v)));
        }
        return static_cast<int>(v.toInteger());
    }
    double number(std::initializer_list<const char*> names, double fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!v.isDouble() || !std::isfinite(v.toDouble())) {
            failConfig(
                QStringLiteral("%1: %2 must be a number, got %3").arg(file_, name, jsonText(v)));
        }
        return v.toDouble();
    }
    bool boolean(std::initializer_list<const char*> names, bool fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!v.isBool()) {
            failConfig(QStringLiteral("%1: %2 must be true or false, got %3")
                           .arg(file_, name, jsonText(v)));
        }
        return v.toBool();
    }
    QString string(std::initializer_list<const char*> names, const QString& fallback) const {
        const auto found = first(names);
        if (!found) return fallback;
        const auto& [name, v] = *found;
        if (!v.isString()) {
            failConfig(
                QStringLiteral("%1: %2 must be a string, got %3").arg(file_, name, jsonText(v)));
        }
        return v.toString();
    }

    // HF's semantics for an optional field: missing takes `fallback`, an explicit null stays
    // null (nullopt).
    std::optional<int> optionalInteger(const char* name, std::optional<int> fallback) const {
        if (!o_.contains(QLatin1String(name))) return fallback;
        if (o_.value(QLatin1String(name)).isNull()) return std::nullopt;
        return integer({name}, 0);
    }
    std::optional<double> optionalNumber(const char* name, std::optional<double> fallback) const {
        if (!o_.contains(QLatin1String(name))) return fallback;
        if (o_.value(QLatin1String(name)).isNull()) return std::nullopt;
        return number({name}, 0);
    }

private:
    const QJsonObject& o_;
    QString file_;
    QSet<QString> floatLiterals_;
};

// activations.py's ACT2FN names; gelu_fast only where `fastGelu` (the newer decoder families).
model::Activation activationNamed(const QString& name, const QString& file, const char* field,
                                  bool fastGelu = false);

// config.json → Config for each family in the table (io/model/family_configs.cpp): the reader
// beside the family's row in core/model/family.h, or nullptr.
using ConfigRead = void (*)(const ConfigReader& reader, model::Config& config);
ConfigRead configReaderFor(model::Family family);

}  // namespace ae::io
