// Structural scene edits (core, no Qt in the code under test): each leaves a scene the engine
// accepts, with masks, tables and widths kept in step.
#include <QtTest>

#include "core/attention_engine.h"
#include "core/scene_edit.h"
#include "core/word_vectors.h"
#include "io/scene/scene_file.h"

using namespace ae;

namespace {

void verifyComputes(const Scene& scene) {
    AttentionEngine<double> engine(scene);
    try {
        engine.compute();
    } catch (const SceneError& error) {
        QFAIL(error.what());
    }
    QCOMPARE(static_cast<int>(engine.allowed().rows()), scene.queryCount());
    QCOMPARE(static_cast<int>(engine.allowed().cols()), scene.keyCount());
}

}  // namespace

class TestSceneEdit : public QObject {
    Q_OBJECT
private slots:
    void largestDivisor_data();
    void largestDivisor();
    void retokenizeMovesMaskWithTokens();
    void sourceOnOffKeepsMaskSized();
    void learnedRowsAreStable();
    void modelWidthKeepsOldCells();
    void projectionWidthAndModes();
    void rerollMatchesInit();
    void inferredSpecForIntegerWeights();
};

void TestSceneEdit::largestDivisor_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("limit");
    QTest::addColumn<int>("divisor");
    QTest::newRow("keeps") << 8 << 4 << 4;
    QTest::newRow("drops") << 6 << 4 << 3;
    QTest::newRow("prime") << 7 << 6 << 1;
    QTest::newRow("limit above n") << 6 << 12 << 6;
    QTest::newRow("limit 0") << 6 << 0 << 1;
}

void TestSceneEdit::largestDivisor() {
    QFETCH(int, n);
    QFETCH(int, limit);
    QFETCH(int, divisor);
    QCOMPARE(largestDivisorAtMost(n, limit), divisor);
}

void TestSceneEdit::retokenizeMovesMaskWithTokens() {
    Scene scene = io::loadPreset("four-words");
    BoolMatrix allowed = BoolMatrix::Constant(4, 4, true);
    allowed(2, 1) = false;  // query word_3 may not see key word_2
    scene.mask.allowed = allowed;
    scene.mask.padding = {false, false, false, true};
    // New order: word_2, new, word_3, word_4 (word_1 removed).
    retokenize(scene, Stream::Query, {"word_2", "new", "word_3", "word_4"}, {1, -1, 2, 3});
    QCOMPARE(scene.mask.padding, (std::vector<bool>{false, false, false, true}));
    QVERIFY(!(*scene.mask.allowed)(2, 0));  // still word_3 -> word_2
    QCOMPARE(int(scene.mask.allowed->count()), 15);
    QVERIFY(scene.embeddings.row(1) == wordVector("new", 3).transpose());
    verifyComputes(scene);
    moveToken(scene, Stream::Query, 0, 3);
    QVERIFY(!(*scene.mask.allowed)(1, 3));
    QCOMPARE(scene.tokens.back(), std::string("word_2"));
    verifyComputes(scene);
}

void TestSceneEdit::sourceOnOffKeepsMaskSized() {
    Scene scene = io::loadPreset("cross");  // 4 queries, 7 source tokens, an allowed matrix
    setPadding(scene, 6, true);
    QCOMPARE(scene.mask.padding.size(), std::size_t(7));
    insertToken(scene, Stream::Source, 7, "k7");
    QCOMPARE(scene.mask.padding.size(), std::size_t(8));
    QCOMPARE(scene.mask.allowed->cols(), 8);
    verifyComputes(scene);
    setSourceEnabled(scene, false);
    QCOMPARE(scene.keyCount(), 4);
    QCOMPARE(scene.mask.padding.size(), std::size_t(4));
    QCOMPARE(scene.mask.allowed->cols(), 4);
    verifyComputes(scene);
    setSourceEnabled(scene, true);
    QCOMPARE(scene.sourceTokens, scene.tokens);
    verifyComputes(scene);
}

void TestSceneEdit::learnedRowsAreStable() {
    const MatrixD table = learnedPositionRows(0, 6, 5);
    QVERIFY(learnedPositionRows(2, 3, 5) == table.middleRows(2, 3));
    QVERIFY(learnedPositionRows(0, 6, 8).leftCols(5) == table);
    QVERIFY(table.row(0) != table.row(1));
    Scene scene = io::loadPreset("journey");
    setPositionalKind(scene, PositionalKind::Learned);
    QCOMPARE(scene.positional.table.rows(), scene.queryCount());
    insertToken(scene, Stream::Query, 0, "first");
    QCOMPARE(scene.positional.table.rows(), scene.queryCount());
    verifyComputes(scene);
}

void TestSceneEdit::modelWidthKeepsOldCells() {
    Scene scene = io::loadPreset("gpt2-style");  // learned table, W_O
    const Scene before = scene;
    setNormEnabled(scene, true);
    setModelWidth(scene, 10, inferredDrawSpec(scene));
    QCOMPARE(scene.dModel(), 10);
    QVERIFY(scene.embeddings.leftCols(8) == before.embeddings);
    QVERIFY(scene.embeddings.rightCols(2).isZero(0));
    QVERIFY(scene.projections.query.topRows(8) == before.projections.query);
    QVERIFY(scene.positional.table.leftCols(8) == before.positional.table);
    QCOMPARE(scene.norm.weight.size(), 10);
    QCOMPARE(scene.dOut(), before.dOut());
    verifyComputes(scene);
    // Identity: d_proj follows d_model, heads follow d_proj.
    Scene identity = io::loadPreset("identity");
    identity.heads = 4;
    setModelWidth(identity, 6, InitSpec{});
    QCOMPARE(identity.dProj(), 6);
    QCOMPARE(identity.heads, 3);
    verifyComputes(identity);
}

void TestSceneEdit::projectionWidthAndModes() {
    Scene scene = io::loadPreset("tutorial-variant");  // d_proj 8, 4 heads, W_O 8 x 8
    const Scene before = scene;
    setProjectionWidth(scene, 12, InitSpec{});
    QCOMPARE(scene.dProj(), 12);
    QCOMPARE(scene.heads, 4);
    QVERIFY(scene.projections.key.leftCols(8) == before.projections.key);
    QCOMPARE(scene.projections.output.rows(), 12);
    QVERIFY(scene.projections.output.topRows(8) == before.projections.output);
    verifyComputes(scene);
    setProjectionWidth(scene, 9, InitSpec{});
    QCOMPARE(scene.heads, 3);
    verifyComputes(scene);
    setProjectionMode(scene, ProjectionMode::SharedQK, InitSpec{});
    QCOMPARE(scene.projections.key.size(), 0);
    verifyComputes(scene);
    setProjectionMode(scene, ProjectionMode::Separate, InitSpec{});
    QVERIFY(scene.projections.key == scene.projections.query);
    setProjectionMode(scene, ProjectionMode::Identity, InitSpec{});
    QCOMPARE(scene.dProj(), scene.dModel());
    QCOMPARE(scene.projections.output.rows(), scene.dModel());
    verifyComputes(scene);
    setOutputProjection(scene, false, InitSpec{});
    QVERIFY(!scene.projections.hasOutput);
    verifyComputes(scene);
}

void TestSceneEdit::rerollMatchesInit() {
    Scene scene = io::loadPreset("shared-qk");
    InitSpec spec;
    spec.seed = 99;
    spec.distribution = InitDistribution::Uniform;
    rerollProjections(scene, spec, true);
    QVERIFY(scene.init.has_value());
    // Saved with its init, the scene loads back with the same matrices.
    const Scene loaded = io::parseScene(io::sceneToJson(scene));
    QVERIFY(loaded.projections.query == scene.projections.query);
    QVERIFY(loaded.projections.value == scene.projections.value);
    QVERIFY(loaded.projections.queryBias == scene.projections.queryBias);
    QVERIFY(loaded.embeddings == scene.embeddings);
    verifyComputes(scene);
}

void TestSceneEdit::inferredSpecForIntegerWeights() {
    const InitSpec spec = inferredDrawSpec(io::loadPreset("four-words"));  // weights 0 .. 2
    QCOMPARE(spec.distribution, InitDistribution::Integers);
    QCOMPARE(spec.low, 0.0);
    QCOMPARE(spec.high, 3.0);
    QCOMPARE(inferredDrawSpec(io::loadPreset("cross")).distribution, InitDistribution::Normal);
}

QTEST_GUILESS_MAIN(TestSceneEdit)
#include "test_scene_edit.moc"
