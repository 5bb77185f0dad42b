#pragma once
// Shared by the tests of a whole model in the window (tests/ui/model_window): the window each test
// starts from (the default scene at 1024x768, an autosave folder of its own, the unsaved-changes
// question answered by the test), the wait for the document and the model session, and another
// window on the same files, as on the next start. A test class derives from QObject and from
// ModelWindowFixture, and calls startModelWindowTests() in initTestCase(), openWindow() in init()
// and closeWindow() in cleanup().

#include <QApplication>
#include <QCoreApplication>
#include <QFont>
#include <QList>
#include <QSettings>
#include <QSize>
#include <QStandardPaths>
#include <QString>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>
#include <optional>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "ui/files/file_actions.h"
#include "ui/window/main_window.h"

namespace ae::test {

inline QString gpt2Tiny() {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/gpt2-tiny");
}

// Once per test executable: test-mode settings under the test's own name (tests running side by
// side must not clear each other's), and the UI font.
inline void startModelWindowTests(const QString& testName) {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("attention-explorer-tests"));
    QCoreApplication::setApplicationName(testName);
    QApplication::setFont(QFont(QStringLiteral("DejaVu Sans"), 9));
}

class ModelWindowFixture {
protected:
    // Fresh settings, an autosave folder of its own, and the window; unsaved changes are asked
    // about through asked_ and answered with answer_ (Discard unless the test says otherwise).
    void openWindow() {
        QSettings().clear();
        dir_ = std::make_unique<QTemporaryDir>();
        qputenv("AE_AUTOSAVE_DIR", dir_->filePath(QStringLiteral("autosave")).toLocal8Bit());
        startAnotherWindow(QSize(1024, 768));
        asked_.clear();
        answer_ = ui::UnsavedChoice::Discard;
        window_->fileActions()->setUnsavedQuestion([this](const QString& name) {
            asked_ << name;
            return answer_;
        });
    }
    void closeWindow() {
        window_.reset();
        dir_.reset();
    }
    // Replaces the window with a new one, as the next start makes it (its own size unless `size`
    // is given): the default scene, shown, the model's progress without delay. Unsaved changes
    // in it are no longer answered by the test.
    void startAnotherWindow(std::optional<QSize> size = std::nullopt) {
        window_.reset();
        window_ = std::make_unique<ui::MainWindow>();
        if (size) window_->resize(*size);
        window_->openPreset(QStringLiteral("default"));
        window_->show();
        session()->setProgressDelay(0);
    }
    // The document's results and the model session's runs are in, and their signals handled.
    void settle() {
        for (int i = 0; i < 3; ++i) {
            window_->document()->waitForResults();
            session()->waitUntilIdle();
            QCoreApplication::processEvents();
        }
    }
    void openModel(const QString& folder = gpt2Tiny()) {
        QVERIFY(window_->fileActions()->openModel(folder));
        settle();
    }
    document::ModelSession* session() const { return window_->modelSession(); }

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<ui::MainWindow> window_;
    QList<QString> asked_;
    ui::UnsavedChoice answer_ = ui::UnsavedChoice::Discard;
};

}  // namespace ae::test
