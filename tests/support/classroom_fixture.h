#pragma once
// Shared by the classroom's tests (tests/ui/classroom): the window each test starts from, as
// classroom_window.h makes it, and what every test does with it. A test class derives from
// QObject and from this, and calls startClassroomTests() in initTestCase(), openWindow() in init()
// and closeWindow() in cleanup().

#include <QApplication>
#include <QString>
#include <QtTest>
#include <memory>

#include "document/attention_document.h"
#include "plot/stage.h"
#include "support/classroom_window.h"
#include "ui/classroom/classroom.h"
#include "ui/window/main_window.h"

namespace ae::test {

class ClassroomFixture {
protected:
    // A fresh classroom window, exposed, active and settled. QVERIFY inside.
    void openWindow() {
        window_ = classroomWindow();
        QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
        QApplication::setActiveWindow(window_.get());
        settle();
    }
    void closeWindow() {
        window_.reset();
        forgetPresentationScale();
    }
    void settle() { settleClassroom(); }
    // Opens a built-in scene, as File › Examples does, and waits for its results.
    void open(const char* preset) {
        window_->openPreset(QString::fromLatin1(preset));
        settle();
    }
    ui::Classroom* classroom() const { return window_->classroom(); }
    const plot::EngineF& engine() const { return window_->document()->engine(); }

    std::unique_ptr<ui::MainWindow> window_;
};

}  // namespace ae::test
