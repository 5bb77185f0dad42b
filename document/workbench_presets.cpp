#include "document/workbench_presets.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

#include "io/model/hub_cache.h"

namespace ae::document {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("WorkbenchPresets", text);
}

std::vector<WorkbenchPreset> makePresets() {
    std::vector<WorkbenchPreset> presets;
    {
        // The built-in model's own sequence (its about.json): 20 random letters, repeated. At
        // the last "s" an induction head looks at the token after the first "s" (the "k" that
        // starts the second copy) and copies it; the corrupted copy starts its second half
        // with "e" instead, so induction now says "e".
        const QString period = QStringLiteral("kqbzhwmfxrjtdvpgnlcs");
        WorkbenchPreset p;
        p.name = QStringLiteral("induction");
        p.heading = tr("Workbench: which heads do induction? (patching)");
        p.notice = tr(
            "The tiny model trained here, on 20 random letters and the same 20 again. At the last "
            "letter it predicts \"k\", the letter that followed the same letter earlier: "
            "induction. The corrupted text starts the second copy with \"e\", and the model then "
            "predicts \"e\". Patching each head's output from the clean run into the corrupted "
            "one shows which heads carry the answer: the two induction heads of layer 1. The "
            "residual stream row lights up at position 20, where the texts differ.");
        p.model = QStringLiteral("builtin:tiny-induction");
        p.text = period + period;
        p.settings.mode = WorkbenchMode::Patching;
        p.settings.corrupted = period + QStringLiteral("e") + period.mid(1);
        p.settings.target = QStringLiteral("k");
        p.settings.foil = QStringLiteral("e");
        presets.push_back(p);
    }
    {
        WorkbenchPreset p;
        p.name = QStringLiteral("ioi");
        p.heading = tr("Workbench: indirect object identification on GPT-2 small (patching)");
        p.notice =
            tr("Wang et al. (2022), \"Interpretability in the Wild\": GPT-2 small completes "
               "\"When Mary and John went to the store, John gave a drink to\" with \" Mary\". "
               "The corrupted text swaps the second name, and patching shows which heads move "
               "the name. Needs your copy of GPT-2 small (docs/models.md says how to get it).");
        p.text = QStringLiteral("When Mary and John went to the store, John gave a drink to");
        p.settings.mode = WorkbenchMode::Patching;
        p.settings.corrupted =
            QStringLiteral("When Mary and John went to the store, Mary gave a drink to");
        p.settings.target = QStringLiteral(" Mary");
        p.settings.foil = QStringLiteral(" John");
        presets.push_back(p);
    }
    return presets;
}

}  // namespace

const std::vector<WorkbenchPreset>& workbenchPresets() {
    static const std::vector<WorkbenchPreset> presets = makePresets();
    return presets;
}

const WorkbenchPreset* findWorkbenchPreset(const QString& name) {
    for (const WorkbenchPreset& p : workbenchPresets())
        if (p.name == name) return &p;
    return nullptr;
}

bool isGpt2Small(const QString& folder) {
    QFile file(QDir(folder).filePath(QStringLiteral("config.json")));
    if (folder.isEmpty() || !file.open(QIODevice::ReadOnly)) return false;
    const QJsonObject c = QJsonDocument::fromJson(file.readAll()).object();
    return c.value(QLatin1String("model_type")).toString() == QLatin1String("gpt2") &&
           c.value(QLatin1String("n_layer")).toInt() == 12 &&
           c.value(QLatin1String("n_head")).toInt() == 12 &&
           c.value(QLatin1String("n_embd")).toInt() == 768 &&
           c.value(QLatin1String("vocab_size")).toInt() == 50257;
}

QString findGpt2Small(const QStringList& recentModels, const QString& hubFolder) {
    for (const QString& folder : recentModels)
        if (isGpt2Small(folder)) return folder;
    // One that opens first; else one that does not, so that opening it says why (a checkpoint
    // without safetensors, say) rather than that there is none.
    const std::vector<io::HubModel> cached = io::listHubModels(hubFolder);
    for (const io::HubModel& m : cached)
        if (m.problem.isEmpty() && isGpt2Small(m.snapshot)) return m.snapshot;
    for (const io::HubModel& m : cached)
        if (isGpt2Small(m.snapshot)) return m.snapshot;
    return {};
}

}  // namespace ae::document
