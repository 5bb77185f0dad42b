// The classroom's examples gallery, and with AE_TOUR_DIR set, tour() saves the screenshots of the
// README's tour there. The walkthrough, the neuron view, pin and compare and the what-if
// comparisons have tests of their own beside this one (test_classroom_*); presentation mode and
// the keys are in test_presentation.

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QListWidget>
#include <QSettings>
#include <QSpinBox>
#include <QUndoStack>
#include <QtTest>

#include "document/attention_document.h"
#include "io/scene/scene_file.h"
#include "plot/heatmap_grid.h"
#include "support/classroom_fixture.h"
#include "ui/classroom/classroom.h"
#include "ui/classroom/comparison_views.h"
#include "ui/classroom/examples_gallery.h"
#include "ui/classroom/neuron_view.h"
#include "ui/classroom/walkthrough_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/presentation_mode.h"

using namespace ae;
using namespace ae::ui;

class TestClassroom : public QObject, private test::ClassroomFixture {
    Q_OBJECT
private slots:
    void initTestCase() { test::startClassroomTests(); }
    void init() { openWindow(); }
    void cleanup() { closeWindow(); }
    void galleryOffersRequiredScenesAndOpensThem();
    void galleryOnlyOnFirstStart();
    void tour();
};

void TestClassroom::galleryOffersRequiredScenesAndOpensThem() {
    // The constructor never opens a dialog: tests and scripts would block on it.
    for (QWidget* w : QApplication::topLevelWidgets())
        QVERIFY2(!(qobject_cast<QDialog*>(w) && w->isVisible()), qPrintable(w->objectName()));

    const QStringList required = {"journey",    "four-words",      "tutorial-variant", "bert-base",
                                  "gpt2-style", "cross-sentences", "why-scale"};
    QStringList builtIn;
    for (const io::PresetInfo& p : io::presets())
        builtIn << p.name;
    QStringList offered;
    for (const GalleryExample& e : galleryExamples()) {
        offered << e.preset;
        QVERIFY2(!e.notice.isEmpty(), qPrintable(e.preset));
    }
    for (const QString& name : required) {
        QVERIFY2(offered.contains(name), qPrintable(name));
        QVERIFY2(builtIn.contains(name), qPrintable(name));
    }

    ExamplesGallery* gallery = classroom()->gallery();
    classroom()->showGallery();
    QVERIFY(gallery->isVisible());
    QVERIFY(!gallery->isModal());
    // The scenes, then the workbench's experiments whose model can be had (IOI always: it looks
    // for the user's GPT-2 small when picked).
    QCOMPARE(gallery->list()->count(), galleryExamples().size() + workbenchExamples().size());
    QVERIFY(workbenchExamples().size() >= 1);
    for (int row = 0; row < galleryExamples().size(); ++row) {
        gallery->list()->setCurrentRow(row);
        gallery->openSelected();
        settle();
        const Scene expected = io::loadPreset(galleryExamples()[row].preset);
        const Scene& now = window_->document()->scene();
        QCOMPARE(now.title, expected.title);
        QCOMPARE(now.tokens, expected.tokens);
        QCOMPARE(now.hasSource, expected.hasSource);
        QVERIFY(now.embeddings.isApprox(expected.embeddings));
    }
    // The new scenes are what they claim to be.
    const Scene cross = io::loadPreset("cross-sentences");
    QVERIFY(cross.hasSource);
    QCOMPARE(cross.sourceTokens.size(), size_t(4));
    const Scene why = io::loadPreset("why-scale");
    QCOMPARE(why.dProj(), 256);
    QCOMPARE(why.heads, 1);
    QCOMPARE(why.scale.kind, ScaleKind::None);
    AttentionEngine<double> saturated(why);
    saturated.compute();
    for (Eigen::Index i = 0; i < saturated.weights(0).rows(); ++i)
        QVERIFY(saturated.weights(0).row(i).maxCoeff() > 0.95);
}

void TestClassroom::galleryOnlyOnFirstStart() {
    QSettings().remove(QStringLiteral("classroom/galleryShown"));
    classroom()->showGalleryOnFirstStart();
    QVERIFY(classroom()->gallery()->isVisible());
    classroom()->gallery()->hide();
    classroom()->showGalleryOnFirstStart();
    QVERIFY(!classroom()->gallery()->isVisible());
}

// Not a check: the README's screenshots, when AE_TOUR_DIR names a folder.
void TestClassroom::tour() {
    const QString dir = qEnvironmentVariable("AE_TOUR_DIR");
    if (dir.isEmpty()) QSKIP("set AE_TOUR_DIR to save the tour's screenshots");
    const auto save = [&](QWidget* w, const QString& name) {
        settle();
        QTest::qWait(150);
        const QImage image = w->grab().toImage();
        QVERIFY(image.save(dir + QLatin1Char('/') + name));
    };
    window_->resize(1600, 1000);
    ExamplesGallery* gallery = classroom()->gallery();
    classroom()->showGallery();
    gallery->list()->setCurrentRow(5);
    save(gallery, QStringLiteral("tour-gallery.png"));
    gallery->hide();

    open("gpt2-style");
    classroom()->walkthroughDock()->show();
    classroom()->walkthrough()->setStep(static_cast<int>(WalkStep::Softmax));
    window_->grid()->setSelectedRow(3);
    save(window_.get(), QStringLiteral("tour-walkthrough.png"));
    classroom()->walkthrough()->setStep(static_cast<int>(WalkStep::Query));
    save(window_.get(), QStringLiteral("tour-walkthrough-query.png"));
    classroom()->walkthroughDock()->hide();

    open("default");
    window_->findChild<QAction*>(QStringLiteral("viewAllHeadsAction"))->trigger();
    classroom()->neuronDock()->show();
    window_->resizeDocks({classroom()->neuronDock()}, {520}, Qt::Vertical);
    window_->findChild<QSpinBox*>(QStringLiteral("headSpin"))->setValue(1);
    classroom()->neuronView()->setQuery(2);
    save(window_.get(), QStringLiteral("tour-neuron.png"));
    classroom()->neuronDock()->hide();

    window_->findChild<QAction*>(QStringLiteral("pinAction"))->trigger();
    Mask mask = window_->document()->scene().mask;
    mask.causal = true;
    window_->document()->setMask(mask);
    save(window_.get(), QStringLiteral("tour-pin.png"));
    classroom()->pinDock()->hide();
    window_->document()->undoStack()->undo();

    QDialog* three = classroom()->projectionComparison();
    three->show();
    save(three, QStringLiteral("tour-three-matrices.png"));
    three->hide();
    QDialog* scaling = classroom()->scalingPlot();
    scaling->show();
    save(scaling, QStringLiteral("tour-sqrt-dk.png"));
    scaling->hide();
    open("journey");
    PositionsComparison* positions = classroom()->positionsComparison();
    positions->show();
    positions->setEncodings(false);
    save(positions, QStringLiteral("tour-positions-off.png"));
    positions->setEncodings(true);
    save(positions, QStringLiteral("tour-positions-on.png"));
    positions->hide();

    open("default");
    classroom()->walkthroughDock()->hide();
    window_->findChild<QAction*>(QStringLiteral("viewAllHeadsAction"))->trigger();
    window_->findChild<QAction*>(QStringLiteral("highContrastAction"))->trigger();
    QApplication::setActiveWindow(window_.get());
    QTest::keyClick(window_.get(), Qt::Key_F11);
    QVERIFY(classroom()->presentation()->isActive());
    QTest::keyClick(window_.get(), Qt::Key_Q);
    QTest::keyClick(window_.get(), Qt::Key_Q);
    save(window_.get(), QStringLiteral("tour-presentation.png"));
    QTest::keyClick(window_.get(), Qt::Key_Escape);
    window_->findChild<QAction*>(QStringLiteral("highContrastAction"))->trigger();
}

QTEST_MAIN(TestClassroom)
#include "test_classroom.moc"
