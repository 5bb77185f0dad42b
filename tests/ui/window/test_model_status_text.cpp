// The status bar's KV-cache figures for a model's layer (ui/window/model_status_text.h): the
// layer's at its kv heads in float32, and the model's at its real size.

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>
#include <cmath>

#include "core/model/model.h"
#include "core/model/model_analysis.h"
#include "io/model/model_folder.h"
#include "io/scene/scene_file.h"
#include "support/model_session_fixture.h"
#include "ui/window/model_status_text.h"

using namespace ae;
using namespace ae::ui;
using namespace ae::testing;

class TestModelStatusText : public QObject {
    Q_OBJECT
private slots:
    void keyValueCacheStatus_data();
    void keyValueCacheStatus();
};

void TestModelStatusText::keyValueCacheStatus_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("expected");
    // The layer: 2 (K and V) x its kv heads x head_dim numbers, in the window's float32. The
    // model: 2 x 2 layers x 2 kv heads x 8 = 64 numbers a token, 4 bytes each (F32) or 2 (BF16).
    QTest::newRow("llama-tiny-gqa")
        << "llama-tiny-gqa"
        << "KV cache 2 × 2 kv heads × 8 = 32 numbers/token/layer (128 B at float32); "
           "llama-tiny-gqa: 256 B/token";
    QTest::newRow("llama-tiny-bf16")
        << "llama-tiny-bf16"
        << "KV cache 2 × 2 kv heads × 8 = 32 numbers/token/layer (128 B at float32); "
           "llama-tiny-bf16: 128 B/token";
    // gpt2-tiny: 4 heads of 8, every head its own K and V, 2 layers, F32: 2·2·4·8·4 = 512 B.
    QTest::newRow("gpt2-tiny")
        << "gpt2-tiny"
        << "KV cache 2 × 4 kv heads × 8 = 64 numbers/token/layer (256 B at float32); "
           "gpt2-tiny: 512 B/token";
}

void TestModelStatusText::keyValueCacheStatus() {
    QFETCH(QString, name);
    QFETCH(QString, expected);
    Opened o;
    QVERIFY(o.open(modelDir(name.toLatin1().constData())));
    QCOMPARE(ui::keyValueCacheStatus(o.document.scene(), o.session.model(), o.session.folder()),
             expected);
    // The layer's figure follows its kv heads; the model's stays the model's.
    if (o.document.scene().keyValueHeads() > 1) {
        QVERIFY(o.document.setKeyValueHeads(1));
        const QString status =
            ui::keyValueCacheStatus(o.document.scene(), o.session.model(), o.session.folder());
        QVERIFY2(status.startsWith(QStringLiteral("KV cache 2 × 1 kv head × 8 = 16 numbers")),
                 qPrintable(status));
        QVERIFY(status.endsWith(expected.mid(expected.indexOf(QLatin1Char(';')))));
    }
}

QTEST_MAIN(TestModelStatusText)
#include "test_model_status_text.moc"
