// Importing one attention layer from model tensors: the GPT-2 layout (fused Conv1D, X·W) and the
// nn.Linear layout (separate [out, in] weights) of the same matrices give the same scene; every
// refusal names the tensor and the shapes. The CLI's import: tests/cli/test_import_command.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <functional>

#include "core/attention_engine.h"
#include "io/formats/result_export.h"
#include "io/formats/safetensors.h"
#include "io/model/model_import.h"
#include "io/scene/scene_file.h"
#include "support/model_files.h"

using namespace ae;
using namespace ae::testing;
using namespace ae::testing::small_gpt2;

namespace {

// nn.Linear: separate q/k/v/out_proj weights stored [out, in] = Wᵀ.
std::vector<TestTensor> linearTensors(const Layer& l) {
    return {tensor("embed.weight", l.wte),
            tensor("pos.weight", l.wpe),
            vectorTensor("norm.weight", l.lnw),
            vectorTensor("norm.bias", l.lnb),
            tensor("q_proj.weight", l.wq.transpose()),
            tensor("k_proj.weight", l.wk.transpose()),
            tensor("v_proj.weight", l.wv.transpose()),
            vectorTensor("q_proj.bias", l.bq),
            vectorTensor("k_proj.bias", l.bk),
            vectorTensor("v_proj.bias", l.bv),
            tensor("out_proj.weight", l.wo.transpose()),
            vectorTensor("out_proj.bias", l.bo)};
}

io::ModelImportSpec linearSpec() {
    io::ModelImportSpec s;
    s.layout = io::WeightLayout::Linear;
    s.query = "q_proj.weight";
    s.key = "k_proj.weight";
    s.value = "v_proj.weight";
    s.queryBias = "q_proj.bias";
    s.keyBias = "k_proj.bias";
    s.valueBias = "v_proj.bias";
    s.output = "out_proj.weight";
    s.outputBias = "out_proj.bias";
    s.embeddings = "embed.weight";
    s.positions = "pos.weight";
    s.normWeight = "norm.weight";
    s.normBias = "norm.bias";
    s.tokenIds = {3, 1, 4, 1};
    s.heads = 2;
    s.causal = true;
    return s;
}

QString refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const io::MatrixFileError& error) {
        return QString::fromUtf8(error.what());
    }
    return QStringLiteral("(accepted)");
}

}  // namespace

class ModelImportTest : public QObject {
    Q_OBJECT
private:
    QTemporaryDir dir_;
    QString gpt2File_, linearFile_;
    Layer layer_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        gpt2File_ = dir_.filePath("gpt2.safetensors");
        linearFile_ = dir_.filePath("linear.safetensors");
        QVERIFY(writeSafetensors(gpt2File_, gpt2Tensors(layer_)));
        QVERIFY(writeSafetensors(linearFile_, linearTensors(layer_)));
    }

    void bothLayoutsGiveTheSameScene() {
        const io::SafetensorsFile gpt2(gpt2File_), linear(linearFile_);
        const Scene a = io::importModel(io::tensorReader(gpt2), gpt2Spec());
        const Scene b = io::importModel(io::tensorReader(linear), linearSpec());
        QCOMPARE(QString(io::sceneToJson(a)), QString(io::sceneToJson(b)));

        // And the scene is the layer we wrote.
        QVERIFY(a.projections.query == layer_.wq);
        QVERIFY(a.projections.key == layer_.wk);
        QVERIFY(a.projections.value == layer_.wv);
        QVERIFY(a.projections.output == layer_.wo);
        QVERIFY(a.projections.keyBias == layer_.bk);
        QVERIFY(a.projections.outputBias == layer_.bo);
        QVERIFY(a.embeddings.row(0) == layer_.wte.row(3));
        QVERIFY(a.embeddings.row(3) == layer_.wte.row(1));
        QCOMPARE(a.positional.kind, PositionalKind::Learned);
        QVERIFY(a.positional.table == layer_.wpe.topRows(4));
        QVERIFY(a.norm.enabled && a.norm.weight == layer_.lnw && a.norm.bias == layer_.lnb);
        QCOMPARE(a.heads, 2);
        QVERIFY(a.mask.causal);
        QCOMPARE(a.tokens, (std::vector<std::string>{"3", "1", "4", "1"}));

        // The written scene reads back and computes.
        const Scene reread = io::parseScene(io::sceneToJson(a));
        AttentionEngine<double> engine;
        engine.setScene(reread);
        engine.compute();
        QCOMPARE(engine.output().rows(), 4);
    }

    // The token and position tables are read by row: a 50257 x 768 wte costs only the rows
    // chosen. A reader that refuses to read either table whole still imports the same scene.
    void tablesAreReadByRowOnly() {
        const io::SafetensorsFile f(gpt2File_);
        io::TensorReader rowsOnly = io::tensorReader(f);
        QStringList readWhole;
        rowsOnly.matrix = [&f, &readWhole](const QString& name) {
            readWhole << name;
            return f.matrix(name);
        };
        const Scene a = io::importModel(rowsOnly, gpt2Spec());
        QVERIFY2(!readWhole.contains("wte.weight") && !readWhole.contains("wpe.weight"),
                 qPrintable(readWhole.join(", ")));
        QVERIFY(readWhole.contains("h.0.attn.c_attn.weight"));  // the test can see reads
        QCOMPARE(QString(io::sceneToJson(a)),
                 QString(io::sceneToJson(io::importModel(io::tensorReader(f), gpt2Spec()))));
    }

    void guessesFromNames() {
        std::vector<io::TensorShape> shapes;
        for (const TestTensor& t : gpt2Tensors(layer_))
            shapes.push_back({t.name, t.shape});
        io::ModelImportSpec guess = io::guessImportSpec(shapes);
        guess.tokenIds = {3, 1, 4, 1};
        guess.heads = 2;  // dProj 4 is too narrow for the dHead-64 guess
        QCOMPARE(io::guessImportSpec(shapes).heads, 0);
        const io::SafetensorsFile f(gpt2File_);
        QCOMPARE(QString(io::sceneToJson(io::importModel(io::tensorReader(f), guess))),
                 QString(io::sceneToJson(io::importModel(io::tensorReader(f), gpt2Spec()))));

        shapes.clear();
        for (const TestTensor& t : linearTensors(layer_))
            shapes.push_back({t.name, t.shape});
        guess = io::guessImportSpec(shapes);
        QCOMPARE(guess.layout, io::WeightLayout::Linear);
        QCOMPARE(guess.query, QString("q_proj.weight"));
        QCOMPARE(guess.valueBias, QString("v_proj.bias"));
        QCOMPARE(guess.output, QString("out_proj.weight"));
        QCOMPARE(guess.embeddings, QString());  // "embed.weight" is no name the guess knows
        QCOMPARE(guess.normWeight, QString());
    }

    void wordsAreLookedUp() {
        const std::vector<std::string> vocabulary = {"The", "cat", "\u0120cat", "", "\u0120sat"};
        QCOMPARE(io::lookUpTokens(vocabulary, " The cat\tsat "), (std::vector<long long>{0, 2, 4}));
        QCOMPARE(io::lookUpTokens(vocabulary, "cat"), (std::vector<long long>{1}));
        QCOMPARE(refusal([&] { io::lookUpTokens(vocabulary, "The dog"); }),
                 QString::fromUtf8("tokens: \"dog\" is not in the vocabulary (nor \"\u0120dog\")"));
        QCOMPARE(refusal([&] {
                     io::lookUpTokens({"a", "b"}, "a c");
                 }),
                 QString("tokens: \"c\" is not in the vocabulary"));
        QCOMPARE(refusal([&] { io::lookUpTokens(vocabulary, "  "); }),
                 QString("tokens: type at least one word"));
    }

    void halfPrecisionFileGivesTheSameScene() {
        const QString file = dir_.filePath("gpt2-bf16.safetensors");
        QVERIFY(writeSafetensors(file, gpt2Tensors(layer_, "BF16")));  // 1/16 steps are exact
        const io::SafetensorsFile f(file), ref(gpt2File_);
        QCOMPARE(QString(io::sceneToJson(io::importModel(io::tensorReader(f), gpt2Spec()))),
                 QString(io::sceneToJson(io::importModel(io::tensorReader(ref), gpt2Spec()))));
    }

    void vocabularyLabelsTheTokens() {
        const QString lines = dir_.filePath("vocab.txt");
        QVERIFY(writeBytes(lines, "zero\none\ntwo\nthree\nfour\n"));
        const QString json = dir_.filePath("vocab.json");
        QVERIFY(writeBytes(json, R"({"zero": 0, "one": 1, "three": 3, "four": 4})"));
        const io::SafetensorsFile f(gpt2File_);
        for (const QString& vocab : {lines, json}) {
            io::ModelImportSpec spec = gpt2Spec();
            spec.vocabularyFile = vocab;
            const Scene s = io::importModel(io::tensorReader(f), spec);
            QCOMPARE(s.tokens, (std::vector<std::string>{"three", "one", "four", "one"}));
        }
    }

    void refusals_data() {
        QTest::addColumn<bool>("gpt2");
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("missing tensor") << true << "qkv"
                                        << "h.0.attn.nope"
                                        << "no tensor named h.0.attn.nope";
        QTest::newRow("fused qkv in the wrong layout")
            << true << "layout"
            << "linear"
            << "tensor h.0.attn.c_attn.weight: expected [3p, 4] for a fused QKV with dModel 4 in "
               "layout linear, got [4, 12] (try --layout xw)";
        QTest::newRow("separate weight of the wrong shape")
            << false << "key"
            << "embed.weight"
            << "tensor embed.weight: expected [4, 4] for W_K like W_Q in layout linear, got "
               "[7, 4]";
        QTest::newRow("qkv not a multiple of 3")
            << true << "qkv"
            << "wte.weight"
            << "tensor wte.weight: expected [4, 3p] for a fused QKV with dModel 4 in layout xw, "
               "got [7, 4]";
        QTest::newRow("bias of the wrong length")
            << true << "qkvBias"
            << "h.0.ln_1.bias"
            << "tensor h.0.ln_1.bias: expected [12] for the fused QKV bias, got [4]";
        QTest::newRow("heads not dividing") << true << "heads"
                                            << "3"
                                            << "--heads 3: must divide the projection width 4";
        QTest::newRow("token id past the table")
            << true << "rows"
            << "9"
            << "--rows: token id 9 is past the end of tensor wte.weight [7, 4]";
        QTest::newRow("positions too short")
            << true << "rows"
            << "1,1,1,1,1,1,1"
            << "tensor wpe.weight: expected [>= 7, 4] for learned positions";
        QTest::newRow("norm without bias") << true << "normBias"
                                           << ""
                                           << "give both --norm-weight and --norm-bias";
        QTest::newRow("output of the wrong width")
            << true << "output"
            << "wte.weight"
            << "tensor wte.weight: expected [4, dOut] for W_O in layout xw (dProj 4), got [7, 4]";
    }
    void refusals() {
        QFETCH(bool, gpt2);
        QFETCH(QString, field);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        io::ModelImportSpec spec = gpt2 ? gpt2Spec() : linearSpec();
        if (field == "qkv") spec.qkv = value;
        if (field == "qkvBias") spec.qkvBias = value;
        if (field == "key") spec.key = value;
        if (field == "output") spec.output = value;
        if (field == "normBias") spec.normBias = value;
        if (field == "heads") spec.heads = value.toInt();
        if (field == "rows") spec.tokenIds = io::parseTokenIds(value);
        if (field == "layout")
            spec.layout = value == "xw" ? io::WeightLayout::XW : io::WeightLayout::Linear;
        const io::SafetensorsFile f(gpt2 ? gpt2File_ : linearFile_);
        const QString message = refusal([&] { io::importModel(io::tensorReader(f), spec); });
        QVERIFY2(message.contains(expected), qPrintable(message + " | expected: " + expected));
    }

    // A tensor the file lacks can come from an .npy file instead (here: the token table).
    void npyFileStandsInForATensor() {
        const QString npy = dir_.filePath("table.npy");
        QVERIFY(writeBytes(npy, io::npyBytes(layer_.wte)));
        io::ModelImportSpec spec = gpt2Spec();
        spec.embeddings = npy;
        const io::SafetensorsFile f(gpt2File_);
        const Scene a = io::importModel(io::tensorReader(f), spec);
        QVERIFY(a.embeddings.row(0) == layer_.wte.row(3));
    }

    void unsupportedDtypeIsRefused() {
        const QString file = dir_.filePath("f64.safetensors");
        std::vector<TestTensor> tensors = gpt2Tensors(layer_);
        tensors[0].dtype = "I32";  // same byte count as F32, so the header is valid
        QVERIFY(writeSafetensors(file, tensors));
        const io::SafetensorsFile f(file);
        const QString message = refusal([&] { io::importModel(io::tensorReader(f), gpt2Spec()); });
        QVERIFY2(message.contains("tensor wte.weight: unsupported dtype I32"), qPrintable(message));
    }
};

QTEST_MAIN(ModelImportTest)
#include "test_model_import.moc"
