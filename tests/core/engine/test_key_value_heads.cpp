// Grouped-query attention as a setting (core/key_value_heads.h): the mean-pooling of Ainslie et
// al. 2023 against a hand computation, the round trip through fewer kv heads back to the exact
// weights, the head count and kv count together, and the KV-cache figures.
#include <QtTest>

#include "core/attention_engine.h"
#include "core/init_draw.h"
#include "core/key_value_heads.h"
#include "core/scene_edit.h"

using namespace ae;

namespace {

// Self-attention, separate projections with biases, heads of width 2 over d_proj = 8.
Scene drawnScene(int heads) {
    InitSpec spec;
    spec.seed = 17;
    spec.dModel = 6;
    spec.dProj = 8;
    spec.output = true;
    spec.bias = true;
    Scene scene;
    scene.tokens = {"a", "b", "c", "d", "e"};
    SplitMix64 rng(spec.seed);
    scene.embeddings = drawMatrix(rng, spec, 5, 6);
    scene.projections = drawProjections(rng, spec, 6);
    scene.heads = heads;
    return scene;
}

bool bitEqual(const MatrixD& a, const MatrixD& b) {
    return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}
bool bitEqual(const VectorD& a, const VectorD& b) {
    return a.size() == b.size() && (a.array() == b.array()).all();
}

}  // namespace

class TestKeyValueHeads : public QObject {
    Q_OBJECT
private slots:
    void poolingMatchesHandComputation();
    void poolingKeepsEveryHeadWhenUngrouped();
    void poolingRefusesGroupsThatDoNotDivide();
    void roundTripRestoresTheWeightsExactly();
    void groupedLayerComputesWhatItsPooledWeightsSay();
    void staleSourceIsNoticed();
    void headCountAndKvCountStayValid();
    void nearestKvCount();
    void regimeNames();
    void cacheFigures();
};

void TestKeyValueHeads::poolingMatchesHandComputation() {
    // 2 rows, 4 heads of width 2 (columns h0: 0–1, h1: 2–3, h2: 4–5, h3: 6–7).
    MatrixD columns(2, 8);
    columns << 1, 2, 3, 4, 5, 6, 7, 8,  //
        -1, 0, 1, 10, 2, 2, 4, -6;
    // kv 2: group 0 = heads 0, 1; group 1 = heads 2, 3. By hand:
    // row 0: (1+3)/2 = 2, (2+4)/2 = 3, (5+7)/2 = 6, (6+8)/2 = 7
    // row 1: (-1+1)/2 = 0, (0+10)/2 = 5, (2+4)/2 = 3, (2-6)/2 = -2
    MatrixD two(2, 4);
    two << 2, 3, 6, 7,  //
        0, 5, 3, -2;
    QVERIFY(bitEqual(meanPoolHeadColumns(columns, 4, 2), two));
    // kv 1: every head: row 0: (1+3+5+7)/4 = 4, (2+4+6+8)/4 = 5; row 1: 6/4 = 1.5, 6/4 = 1.5
    MatrixD one(2, 2);
    one << 4, 5,  //
        1.5, 1.5;
    QVERIFY(bitEqual(meanPoolHeadColumns(columns, 4, 1), one));
    // A bias pools the same way.
    VectorD bias(8);
    bias << 1, 2, 3, 4, 5, 6, 7, 8;
    VectorD pooledBias(4);
    pooledBias << 2, 3, 6, 7;
    QVERIFY(bitEqual(meanPoolHeadColumns(bias, 4, 2), pooledBias));
    QCOMPARE(meanPoolHeadColumns(VectorD(), 4, 2).size(), Eigen::Index(0));
}

void TestKeyValueHeads::poolingKeepsEveryHeadWhenUngrouped() {
    const Scene scene = drawnScene(4);
    QVERIFY(bitEqual(meanPoolHeadColumns(scene.projections.key, 4, 4), scene.projections.key));
}

void TestKeyValueHeads::poolingRefusesGroupsThatDoNotDivide() {
    const MatrixD columns = MatrixD::Ones(3, 8);
    QVERIFY_THROWS_EXCEPTION(SceneError, meanPoolHeadColumns(columns, 4, 3));
    QVERIFY_THROWS_EXCEPTION(SceneError, meanPoolHeadColumns(columns, 3, 1));
    QVERIFY_THROWS_EXCEPTION(SceneError, meanPoolHeadColumns(columns, 4, 0));
}

void TestKeyValueHeads::roundTripRestoresTheWeightsExactly() {
    const Scene original = drawnScene(4);
    const KeyValueSource source = keyValueSource(original);
    Scene scene = original;
    // Down to one kv head step by step, then back up: every setting from the source.
    for (int kv : {2, 1, 2, 4}) {
        setKeyValueHeads(scene, source, 4, kv);
        QCOMPARE(scene.keyValueHeads(), kv);
        QCOMPARE(scene.projections.key.cols(), Eigen::Index(kv * 2));
        QVERIFY(isGroupedFrom(scene, source));
    }
    QVERIFY(!scene.kvHeads.has_value());
    QVERIFY(bitEqual(scene.projections.key, original.projections.key));
    QVERIFY(bitEqual(scene.projections.value, original.projections.value));
    QVERIFY(bitEqual(scene.projections.keyBias, original.projections.keyBias));
    QVERIFY(bitEqual(scene.projections.valueBias, original.projections.valueBias));
    // Pooling the pooled weights again would not give this back: 1 kv head, then 2 from that,
    // has both kv heads equal, unlike the source pooled to 2.
    Scene twice = original;
    setKeyValueHeads(twice, source, 4, 1);
    const KeyValueSource fromPooled = keyValueSource(twice);
    setKeyValueHeads(twice, fromPooled, 4, 2);
    QVERIFY(bitEqual(MatrixD(twice.projections.key.middleCols(0, 2)),
                     MatrixD(twice.projections.key.middleCols(2, 2))));
    Scene fromSource = original;
    setKeyValueHeads(fromSource, source, 4, 2);
    QVERIFY(!bitEqual(MatrixD(fromSource.projections.key.middleCols(0, 2)),
                      MatrixD(fromSource.projections.key.middleCols(2, 2))));
}

void TestKeyValueHeads::groupedLayerComputesWhatItsPooledWeightsSay() {
    Scene scene = drawnScene(4);
    const KeyValueSource source = keyValueSource(scene);
    setKeyValueHeads(scene, source, 4, 2);
    AttentionEngine<double> engine(scene);
    engine.compute();
    // Heads 0 and 1 read the same keys; heads 1 and 2 do not.
    QVERIFY(bitEqual(MatrixD(engine.headKey(0)), MatrixD(engine.headKey(1))));
    QVERIFY(!bitEqual(MatrixD(engine.headKey(1)), MatrixD(engine.headKey(2))));
    // K of kv head 1 is X · (mean of heads 2 and 3's W_K columns) + their mean bias.
    const MatrixD x = scene.embeddings;
    const MatrixD expected =
        (x * (source.key.middleCols(4, 2) + source.key.middleCols(6, 2)) / 2.0).rowwise() +
        ((source.keyBias.segment(4, 2) + source.keyBias.segment(6, 2)) / 2.0).transpose();
    QVERIFY((MatrixD(engine.headKey(2)) - expected).cwiseAbs().maxCoeff() < 1e-12);
    // The queries still differ, so the weights of heads in a group differ too.
    QVERIFY(!bitEqual(MatrixD(engine.weights(0)), MatrixD(engine.weights(1))));
}

void TestKeyValueHeads::staleSourceIsNoticed() {
    Scene scene = drawnScene(4);
    const KeyValueSource source = keyValueSource(scene);
    setKeyValueHeads(scene, source, 4, 2);
    QVERIFY(isGroupedFrom(scene, source));
    scene.projections.key(0, 0) += 1.0;  // an edit of the grouped weights
    QVERIFY(!isGroupedFrom(scene, source));
    // The edited layer as a source: its kv heads written out per query head (repeat_kv).
    const KeyValueSource edited = keyValueSource(scene);
    QCOMPARE(edited.key.cols(), Eigen::Index(8));
    QVERIFY(bitEqual(MatrixD(edited.key.middleCols(0, 2)), MatrixD(edited.key.middleCols(2, 2))));
    QVERIFY(isGroupedFrom(scene, edited));
}

void TestKeyValueHeads::headCountAndKvCountStayValid() {
    // Every head count the slider offers, each with every kv count it had before: the result
    // is a scene the engine computes, or a refusal that leaves the scene as it was.
    const Scene original = drawnScene(4);
    const KeyValueSource source = keyValueSource(original);
    for (int fromHeads : {1, 2, 4, 8}) {
        for (int fromKv : keyValueHeadChoices(fromHeads)) {
            for (int toHeads : {1, 2, 4, 8}) {
                Scene scene = original;
                setKeyValueHeads(scene, source, fromHeads, fromKv);
                const int kv = nearestKeyValueHeads(toHeads, scene.keyValueHeads());
                setKeyValueHeads(scene, source, toHeads, kv);
                QCOMPARE(scene.heads, toHeads);
                QCOMPARE(toHeads % scene.keyValueHeads(), 0);
                QVERIFY(!scene.kvHeads || *scene.kvHeads < scene.heads);
                AttentionEngine<double> engine(scene);
                engine.compute();
                QVERIFY(engine.weights(toHeads - 1).allFinite());
            }
        }
    }
    // A kv count that does not divide the heads, a head count that does not divide d_proj:
    // refused, the scene untouched.
    Scene scene = original;
    QVERIFY_THROWS_EXCEPTION(SceneError, setKeyValueHeads(scene, source, 4, 3));
    QVERIFY_THROWS_EXCEPTION(SceneError, setKeyValueHeads(scene, source, 3, 1));
    QCOMPARE(scene.heads, 4);
    QVERIFY(bitEqual(scene.projections.key, original.projections.key));
    // Rotary positions still need an even head width: 8 heads of 1 are refused.
    Scene rotary = original;
    rotary.rotary = RopeParameters{};
    QVERIFY_THROWS_EXCEPTION(SceneError, setKeyValueHeads(rotary, source, 8, 1));
    // Shared Q = K: K is W_Q, there is nothing to group.
    Scene shared = original;
    setProjectionMode(shared, ProjectionMode::SharedQK, inferredDrawSpec(shared));
    QVERIFY_THROWS_EXCEPTION(SceneError, keyValueSource(shared));
}

void TestKeyValueHeads::nearestKvCount() {
    QCOMPARE(nearestKeyValueHeads(8, 2), 2);
    QCOMPARE(nearestKeyValueHeads(2, 4), 2);
    QCOMPARE(nearestKeyValueHeads(6, 4), 3);   // 3 and 6: 3 is nearer
    QCOMPARE(nearestKeyValueHeads(12, 5), 6);  // 4 and 6 equally near: the larger
    QCOMPARE(nearestKeyValueHeads(7, 3), 1);
    QCOMPARE(keyValueHeadChoices(12), (std::vector<int>{1, 2, 3, 4, 6, 12}));
}

void TestKeyValueHeads::regimeNames() {
    QCOMPARE(keyValueRegimeName(8, 8), std::string("multi-head"));
    QCOMPARE(keyValueRegimeName(8, 4), std::string("grouped (4 groups)"));
    QCOMPARE(keyValueRegimeName(8, 1), std::string("multi-query"));
    QCOMPARE(keyValueRegimeName(1, 1), std::string("multi-head"));
}

void TestKeyValueHeads::cacheFigures() {
    QCOMPARE(keyValueCacheNumbersPerTokenPerLayer(2, 16), 64.0);
    QCOMPARE(
        keyValueCacheLayerText(2, 16, 4, "float32"),
        std::string("KV cache 2 × 2 kv heads × 16 = 64 numbers/token/layer (256 B at float32)"));
    QCOMPARE(keyValueCacheLayerText(1, 2, 4, "float32"),
             std::string("KV cache 2 × 1 kv head × 2 = 4 numbers/token/layer (16 B at float32)"));
    // Llama-3.2-1B: 16 layers, 8 kv heads of 64, bf16: 2·16·8·64·2 = 32768 B.
    model::Config llama;
    llama.family = model::Family::Llama;
    llama.layers = 16;
    llama.heads = 32;
    llama.kvHeads = 8;
    llama.headDim = 64;
    QCOMPARE(keyValueCacheBytesPerToken(16, 8, 64, 2), 32768.0);
    QCOMPARE(keyValueCacheModelText("Llama-3.2-1B", llama, DType::BF16),
             std::string("Llama-3.2-1B: 32 KiB/token"));
    // The same model with all 32 heads its own K and V would need four times as much.
    llama.kvHeads = 32;
    QCOMPARE(keyValueCacheModelText("Llama-3.2-1B", llama, DType::BF16),
             std::string("Llama-3.2-1B: 128 KiB/token"));
    QCOMPARE(byteSizeText(1023), std::string("1023 B"));
    QCOMPARE(byteSizeText(1536), std::string("1.5 KiB"));
    QCOMPARE(byteSizeText(3.0 * 1024 * 1024), std::string("3 MiB"));
}

QTEST_GUILESS_MAIN(TestKeyValueHeads)
#include "test_key_value_heads.moc"
