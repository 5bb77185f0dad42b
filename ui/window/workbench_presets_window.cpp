// The workbench's experiments from the examples gallery (document/workbench_presets.h): the
// window opens the preset's model on its text, and once that has run sets the Workbench tab up and
// runs it. Kept apart from main_window.cpp, as window_view.cpp is.

#include <QFileDialog>
#include <QMessageBox>
#include <QPushButton>
#include <QTabWidget>

#include "document/model_session.h"
#include "document/workbench_presets.h"
#include "io/model/hub_cache.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"
#include "ui/window/workbench_panel.h"

namespace ae::ui {

bool MainWindow::openWorkbenchPreset(const QString& name, const QString& folder, QString* why) {
    const document::WorkbenchPreset* preset = document::findWorkbenchPreset(name);
    if (!preset) {
        if (why) *why = tr("There is no workbench experiment called \"%1\"").arg(name);
        return false;
    }
    QString location = preset->model;
    if (location.isEmpty()) {
        location = !folder.isEmpty() ? folder
                                     : document::findGpt2Small(fileActions_->recentModels(),
                                                               io::hubCacheFolder());
        if (location.isEmpty()) {
            if (why)
                *why = tr("This experiment needs GPT-2 small, which does not come with the app "
                          "and was not found among your recent models or in the Hugging Face "
                          "cache (%1): docs/models.md, \"Getting a model folder\", says how to "
                          "get it.")
                           .arg(io::hubCacheFolder());
            return false;
        }
    }
    if (!fileActions_->maybeSave()) return false;
    pendingWorkbench_ = PendingWorkbench{preset->text, preset->settings};
    session_->open(location, preset->text);
    return true;
}

void MainWindow::askWorkbenchPreset(const QString& name) {
    QString why;
    if (openWorkbenchPreset(name, {}, &why) || why.isEmpty()) return;
    QMessageBox box(QMessageBox::Information, tr("GPT-2 small needed"), why, QMessageBox::Cancel,
                    this);
    QPushButton* choose = box.addButton(tr("Choose its folder…"), QMessageBox::AcceptRole);
    box.exec();
    if (box.clickedButton() != choose) return;
    const QString folder =
        QFileDialog::getExistingDirectory(this, tr("The folder of GPT-2 small"), QString());
    if (folder.isEmpty()) return;
    if (!document::isGpt2Small(folder)) {
        QMessageBox::warning(this, tr("Not GPT-2 small"),
                             tr("%1: its config.json is not GPT-2 small's (gpt2, 12 layers of "
                                "12 heads, d 768)")
                                 .arg(folder));
        return;
    }
    openWorkbenchPreset(name, folder, &why);
}

void MainWindow::applyPendingWorkbench() {
    if (!pendingWorkbench_ || session_->isBusy() || session_->layer() < 0 ||
        session_->text() != pendingWorkbench_->text)
        return;
    const document::WorkbenchSettings settings = pendingWorkbench_->settings;
    pendingWorkbench_.reset();
    centre_->setCurrentIndex(centre_->count() - 1);
    workbench_->applySettings(settings);
}

}  // namespace ae::ui
