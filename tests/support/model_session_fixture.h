#pragma once
// A document with a model session (document/model_session.h) on a golden model, and the model
// folders the session's tests write: copies, a small vocabulary, built-in models.

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QString>
#include <QStringList>
#include <QtTest>

#include "document/attention_document.h"
#include "document/model_session.h"
#include "support/run_comparison.h"

namespace ae::testing {

using document::AttentionDocument;
using document::ModelSession;

inline QString modelDir(const char* name) {
    return QStringLiteral(AE_TEST_DATA_DIR "/models/") + QLatin1String(name);
}

// A sharper softmax: scores divided by `divisor` instead of √d_head (one undo step).
inline void divideScoresBy(document::AttentionDocument& document, double divisor) {
    Scale sharp;
    sharp.kind = ScaleKind::Divisor;
    sharp.divisor = divisor;
    document.setScale(sharp);
}

inline void copyFolder(const QString& from, const QString& to) {
    QDir().mkpath(to);
    for (const QString& name : QDir(from).entryList(QDir::Files))
        QFile::copy(QDir(from).filePath(name), QDir(to).filePath(name));
}

// A WordPiece vocabulary of 64 tokens, so that bert-tiny (V = 64) can take tokenized text.
inline void writeSmallVocabulary(const QString& folder) {
    QFile file(QDir(folder).filePath(QStringLiteral("vocab.txt")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    QStringList words = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat",
                         "sat",   "on",    "mat",   "a",     "dog",    "ran"};
    while (words.size() < 64)
        words << QStringLiteral("w%1").arg(words.size());
    file.write(words.join(QLatin1Char('\n')).toUtf8() + "\n");
}

struct Opened {
    document::AttentionDocument document;
    document::ModelSession session{&document};
    Opened() { session.setProgressDelay(0); }
    bool open(const QString& folder) {
        session.open(folder);
        session.waitUntilIdle();
        document.waitForResults();
        session.waitUntilIdle();
        return session.isOpen();
    }
    // Opens `folder` and runs it on `ids`; the induction that follows may not have come yet.
    bool openOn(const QString& folder, const std::vector<long long>& ids) {
        if (!open(folder)) return false;
        session.setIds(ids);
        session.waitUntilIdle(false);
        return true;
    }
    void settle() {
        for (int i = 0; i < 3; ++i) {
            document.waitForResults();
            session.waitUntilIdle();
        }
    }
};

// A test built-in model: a copy of a golden model named `name` under `root`, which
// AE_MODELS_PATH points at while this lives (a packager's extra folder; never resources/models).
struct TestBuiltIns {
    explicit TestBuiltIns(const QString& root) { qputenv("AE_MODELS_PATH", root.toLocal8Bit()); }
    ~TestBuiltIns() { qunsetenv("AE_MODELS_PATH"); }
};

inline void writeAbout(const QString& folder, const QByteArray& json) {
    QFile file(QDir(folder).filePath(QStringLiteral("about.json")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(json);
}

}  // namespace ae::testing
