// The model reference a layer scene keeps in its view (document/model_reference.h): written and
// read back, its folder relative to the scene file when near it, a built-in model by name only.

#include <QtTest>

#include "document/model_reference.h"

using namespace ae;
using namespace ae::document;

class TestModelReference : public QObject {
    Q_OBJECT
private slots:
    void referenceRoundTrips();
    void builtInReferenceKeepsTheNameOnly();
};

void TestModelReference::referenceRoundTrips() {
    ModelReference r;
    r.folder = QStringLiteral("/data/models/gpt2");
    r.fingerprint = QStringLiteral("gpt2 L2 H4/4 d32 hd8 V64 I128 #01234567");
    r.text = QStringLiteral("a \"quoted\" text");
    r.ids = {1, 2, 50000};
    r.attentionMask = {1, 1, 0};
    r.layer = 3;
    r.head = 7;
    const std::string view = withModelReference(R"({"mode":"all_heads"})", r);
    QVERIFY(view.find("all_heads") != std::string::npos);
    QCOMPARE(*modelReference(view), r);
    const std::string near = withFolderRelativeTo(view, QStringLiteral("/data/scenes/s.json"));
    QCOMPARE(modelReference(near)->folder, QStringLiteral("../models/gpt2"));
    QCOMPARE(*modelReference(withFolderResolvedFrom(near, QStringLiteral("/data/scenes/s.json"))),
             r);
    // Far away: absolute.
    const std::string far = withFolderRelativeTo(view, QStringLiteral("/home/a/b/c/s.json"));
    QCOMPARE(modelReference(far)->folder, r.folder);
    QVERIFY(!modelReference(R"({"mode":"all_heads"})"));
    // A sentence pair keeps its second text, token types and boundary.
    ModelReference pair = r;
    pair.textPair = QStringLiteral("and a second");
    pair.tokenTypes = {0, 0, 1};
    pair.pairStart = 2;
    QCOMPARE(*modelReference(withModelReference({}, pair)), pair);
    QCOMPARE(modelReference(withModelReference({}, pair))->input().tokenTypes, pair.tokenTypes);
    QVERIFY(withModelReference({}, r).find("token_types") == std::string::npos);
}

void TestModelReference::builtInReferenceKeepsTheNameOnly() {
    ModelReference r;
    r.folder = QStringLiteral("/usr/share/attention-explorer/models/tiny");
    r.builtIn = QStringLiteral("tiny");
    r.fingerprint = QStringLiteral("gpt2 L2");
    r.ids = {1, 2};
    const std::string view = withModelReference(R"({"mode":"all_heads"})", r);
    QCOMPARE(*modelReference(view), r);  // while open, both
    const std::string saved = withFolderRelativeTo(view, QStringLiteral("/usr/share/s.json"));
    ModelReference byName = r;
    byName.folder.clear();
    QCOMPARE(*modelReference(saved), byName);
    QVERIFY(saved.find("folder") == std::string::npos);
    QVERIFY(saved.find("all_heads") != std::string::npos);
    // Reading it back leaves the name to the session (no folder is made up from the file's).
    QCOMPARE(withFolderResolvedFrom(saved, QStringLiteral("/home/a/s.json")), saved);
    // A reference with a folder and no name is as before.
    ModelReference plain = r;
    plain.builtIn.clear();
    QVERIFY(withModelReference({}, plain).find("builtin") == std::string::npos);
}

QTEST_MAIN(TestModelReference)
#include "test_model_reference.moc"
