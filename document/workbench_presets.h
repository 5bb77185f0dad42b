#pragma once
// The workbench's ready-made experiments: a model, a text and the Workbench tab's settings
// (document/workbench_session.h), offered in the examples gallery.
// - Induction, on the built-in tiny-induction model (works offline): a random sequence repeated,
//   patched against a copy whose second half starts with another token, so the answer at the
//   end is the token an induction head copies.
// - IOI (Wang et al. 2022), on GPT-2 small, which the app does not ship: the user's own copy,
//   found among the recent models or in the Hugging Face hub cache.

#include <QString>
#include <QStringList>
#include <vector>

#include "document/workbench_session.h"

namespace ae::document {

struct WorkbenchPreset {
    QString name;     // "induction", "ioi"
    QString heading;  // the gallery's line
    QString notice;   // what to look at once it has run
    // "builtin:NAME", or empty: the user's GPT-2 small (findGpt2Small).
    QString model;
    QString text;  // the clean text, for the model's tokenizer
    WorkbenchSettings settings;
};

// Every preset, in the gallery's order.
const std::vector<WorkbenchPreset>& workbenchPresets();
const WorkbenchPreset* findWorkbenchPreset(const QString& name);

// Whether `folder` holds GPT-2 small by its config.json: model_type gpt2, 12 layers of 12 heads,
// d 768, a vocabulary of 50257.
bool isGpt2Small(const QString& folder);
// The user's GPT-2 small: the first of `recentModels` that is one, else a snapshot in the hub
// cache `hubFolder` that is one (one that opens first); empty when there is none.
QString findGpt2Small(const QStringList& recentModels, const QString& hubFolder);

}  // namespace ae::document
