#pragma once
// Built-in models (issue 17): small model folders that ship with the app (resources/models/NAME/
// in the source tree) and open by name, as `builtin:NAME`, wherever a model folder is taken: the
// sub-commands' MODEL_DIR, File › Open built-in model, the examples gallery, and a scene file's
// model reference (which keeps the name, not the folder, so it opens on another machine).
//
// Where they are looked for, in this order (the first folder holding a name wins):
//   1. every folder listed in AE_MODELS_PATH (':'-separated), for tests and packagers;
//   2. <the binary's folder>/models: the build tree (resources/CMakeLists.txt copies them there);
//   3. <the binary's folder>/../share/attention-explorer/models: the install tree (cmake --install
//      puts them there, /usr/share/attention-explorer/models in the package).
// A built-in model is a folder of one of those holding a config.json; its name is the folder's.
// docs/models.md, "Built-in models", describes the folder and its about.json.

#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace ae::io {

// What a built-in model's about.json says, for the gallery and the first layer opened. Every
// field may be absent.
struct BuiltInAbout {
    QString title;               // the gallery's heading (the name when empty)
    QString note;                // one paragraph: what to look at once it is open
    QString text;                // the text it opens on (with the folder's tokenizer), or empty
    std::vector<long long> ids;  // the ids it opens on when there is no text, or empty
    int layer = 0;               // the layer and head opened first
    int head = 0;
    QString problem;  // why about.json could not be read (then the rest keeps its defaults)
};

struct BuiltInModel {
    QString name;    // the folder's name: what builtin:NAME says
    QString folder;  // absolute
    BuiltInAbout about;
};

// "builtin:": a model argument with this prefix names a built-in model.
QString builtInPrefix();
// Whether `argument` is "builtin:NAME", and NAME.
bool isBuiltInArgument(const QString& argument);
QString builtInName(const QString& argument);

// The folders searched, in order, for a binary living in `applicationDirectory` (see above);
// only existing folders are listed. Without an argument: QCoreApplication::applicationDirPath()
// (AE_MODELS_PATH alone when no application object exists).
QStringList builtInModelDirectories(const QString& applicationDirectory);
QStringList builtInModelDirectories();

// Every built-in model found in `directories`, sorted by name; of two folders with one name the
// first directory's wins.
std::vector<BuiltInModel> builtInModels(const QStringList& directories);
std::vector<BuiltInModel> builtInModels();
// The built-in model called `name`, or nothing.
std::optional<BuiltInModel> findBuiltInModel(const QString& name, const QStringList& directories);
std::optional<BuiltInModel> findBuiltInModel(const QString& name);

// The folder a model argument stands for: "builtin:NAME" → that built-in's folder; anything
// else is a folder (or file) path, returned as given. An unknown name throws model::ModelError
// of one line listing the built-in models there are (unknownBuiltInMessage).
QString resolveModelArgument(const QString& argument);
// `unknown built-in model "NAME" (built-in models: a, b)`, or `(no built-in models are
// installed)`.
QString unknownBuiltInMessage(const QString& name, const std::vector<BuiltInModel>& available);

// about.json in `folder` (absent: every field its default, no problem).
BuiltInAbout readBuiltInAbout(const QString& folder);

}  // namespace ae::io
