#include "io/model/builtin_models.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

#include "core/model/model.h"

namespace ae::io {
namespace {

const char* const kPathVariable = "AE_MODELS_PATH";

void appendExisting(QStringList& directories, const QString& path) {
    if (path.isEmpty()) return;
    const QFileInfo info(path);
    if (!info.isDir()) return;
    const QString absolute = QDir::cleanPath(info.absoluteFilePath());
    if (!directories.contains(absolute)) directories.append(absolute);
}

QStringList fromEnvironment() {
    QStringList directories;
    for (const QString& path :
         qEnvironmentVariable(kPathVariable).split(QLatin1Char(':'), Qt::SkipEmptyParts))
        appendExisting(directories, path);
    return directories;
}

}  // namespace

QString builtInPrefix() {
    return QStringLiteral("builtin:");
}

bool isBuiltInArgument(const QString& argument) {
    return argument.startsWith(builtInPrefix());
}

QString builtInName(const QString& argument) {
    return isBuiltInArgument(argument) ? argument.mid(builtInPrefix().size()) : QString();
}

QStringList builtInModelDirectories(const QString& applicationDirectory) {
    QStringList directories = fromEnvironment();
    if (!applicationDirectory.isEmpty()) {
        const QDir binary(applicationDirectory);
        appendExisting(directories, binary.filePath(QStringLiteral("models")));
        appendExisting(directories,
                       binary.filePath(QStringLiteral("../share/attention-explorer/models")));
    }
    return directories;
}

QStringList builtInModelDirectories() {
    return builtInModelDirectories(
        QCoreApplication::instance() ? QCoreApplication::applicationDirPath() : QString());
}

std::vector<BuiltInModel> builtInModels(const QStringList& directories) {
    std::vector<BuiltInModel> models;
    for (const QString& directory : directories) {
        const QDir dir(directory);
        for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            if (!QFileInfo(dir.filePath(name + QStringLiteral("/config.json"))).isFile()) continue;
            const bool taken = std::any_of(models.begin(), models.end(),
                                           [&](const BuiltInModel& m) { return m.name == name; });
            if (taken) continue;
            const QString folder = QDir::cleanPath(dir.absoluteFilePath(name));
            models.push_back({name, folder, readBuiltInAbout(folder)});
        }
    }
    std::sort(models.begin(), models.end(),
              [](const BuiltInModel& a, const BuiltInModel& b) { return a.name < b.name; });
    return models;
}

std::vector<BuiltInModel> builtInModels() {
    return builtInModels(builtInModelDirectories());
}

std::optional<BuiltInModel> findBuiltInModel(const QString& name, const QStringList& directories) {
    // Only names that were found count, so "../x" or "a/b" can never reach outside.
    for (BuiltInModel& m : builtInModels(directories)) {
        if (m.name == name) return std::move(m);
    }
    return std::nullopt;
}

std::optional<BuiltInModel> findBuiltInModel(const QString& name) {
    return findBuiltInModel(name, builtInModelDirectories());
}

QString unknownBuiltInMessage(const QString& name, const std::vector<BuiltInModel>& available) {
    QStringList names;
    for (const BuiltInModel& m : available)
        names.append(m.name);
    return QStringLiteral("unknown built-in model \"%1\" (%2)")
        .arg(name, names.isEmpty()
                       ? QStringLiteral("no built-in models are installed")
                       : QStringLiteral("built-in models: ") + names.join(QStringLiteral(", ")));
}

QString resolveModelArgument(const QString& argument) {
    if (!isBuiltInArgument(argument)) return argument;
    const QString name = builtInName(argument);
    const std::vector<BuiltInModel> available = builtInModels();
    for (const BuiltInModel& m : available) {
        if (m.name == name) return m.folder;
    }
    throw model::ModelError(unknownBuiltInMessage(name, available).toStdString());
}

BuiltInAbout readBuiltInAbout(const QString& folder) {
    BuiltInAbout about;
    QFile file(QDir(folder).filePath(QStringLiteral("about.json")));
    if (!file.exists()) return about;
    const QString where = file.fileName() + QStringLiteral(": ");
    if (!file.open(QIODevice::ReadOnly)) {
        about.problem = where + file.errorString();
        return about;
    }
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (!document.isObject()) {
        about.problem = where + (error.error != QJsonParseError::NoError
                                     ? error.errorString()
                                     : QStringLiteral("expected an object"));
        return about;
    }
    const QJsonObject o = document.object();
    // Each field is taken when it has the right type; the first wrong one is named.
    const auto wrong = [&](const char* key, const char* expected) {
        if (about.problem.isEmpty())
            about.problem = where + QLatin1String(key) + QStringLiteral(": expected ") +
                            QLatin1String(expected);
    };
    const auto string = [&](const char* key, QString& into) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined()) return;
        if (v.isString()) {
            into = v.toString();
        } else {
            wrong(key, "a string");
        }
    };
    const auto index = [&](const char* key, int& into) {
        const QJsonValue v = o.value(QLatin1String(key));
        if (v.isUndefined()) return;
        const double d = v.toDouble(-1);
        if (v.isDouble() && d >= 0 && d <= 1e6 && d == static_cast<int>(d)) {
            into = static_cast<int>(d);
        } else {
            wrong(key, "an integer from 0");
        }
    };
    string("title", about.title);
    string("note", about.note);
    string("text", about.text);
    index("layer", about.layer);
    index("head", about.head);
    const QJsonValue ids = o.value(QLatin1String("ids"));
    if (!ids.isUndefined()) {
        std::vector<long long> read;
        bool ok = ids.isArray();
        for (const QJsonValue id : ids.toArray()) {
            const double d = id.toDouble(-1);
            ok = ok && id.isDouble() && d >= 0 && d < 9e15 && d == static_cast<long long>(d);
            read.push_back(static_cast<long long>(d));
        }
        if (ok) {
            about.ids = std::move(read);
        } else {
            wrong("ids", "an array of token ids");
        }
    }
    return about;
}

}  // namespace ae::io
