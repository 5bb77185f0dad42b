// The family table (core/model/family.h): every row has a golden model in tests/data/models that
// the engine runs to the reference's numbers, rows are found by their family and their
// model_type, and the axes the forward pass does not implement are refused by name.
#include <QtTest>

#include "core/model/family.h"
#include "core/model/model.h"
#include "io/model/model_folder.h"
#include "support/model_checks.h"

using namespace ae;
using namespace ae::testing;

namespace {

constexpr double kTolerance = 1e-4;  // the reference's own (model_reference.py TOLERANCE)

// The golden model folders (paths) whose config.json says `modelType` and that have the
// reference's output on ids A: tests/data/models, and tests/data/seq2seq-models for the
// encoder–decoder families.
QStringList goldenModelsOf(const char* modelType) {
    QStringList found;
    for (const char* folder : {"/models", "/seq2seq-models"}) {
        const QDir models(QStringLiteral(AE_TEST_DATA_DIR) + folder);
        for (const QString& name :
             models.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            const QJsonObject config = readJsonFile(models.filePath(name + "/config.json"));
            if (config.value("model_type").toString() == QLatin1String(modelType) &&
                QFile::exists(models.filePath(name + "/expected-ids-A.json")))
                found << models.filePath(name);
        }
    }
    return found;
}

}  // namespace

class TestFamilyTable : public QObject {
    Q_OBJECT

private slots:
    // A row without a golden model would be a family no test runs: adding a family is its row,
    // its config reader and its goldens.
    void everyRowHasAGoldenModelThatMatchesTheReference_data() {
        QTest::addColumn<QString>("modelType");
        for (const model::FamilyRow& row : model::familyTable())
            QTest::newRow(row.modelType) << QString::fromLatin1(row.modelType);
    }
    void everyRowHasAGoldenModelThatMatchesTheReference() {
        QFETCH(QString, modelType);
        const QStringList goldens = goldenModelsOf(qPrintable(modelType));
        QVERIFY2(!goldens.isEmpty(),
                 qPrintable("the family row " + modelType +
                            " has no golden model in tests/data/models (a folder whose "
                            "config.json has that model_type, with expected-ids-A.json)"));
        for (const QString& dir : goldens) {
            const QJsonObject expected = readJsonFile(dir + "/expected-ids-A.json");
            const io::ModelFolder folder(dir);
            QCOMPARE(QString::fromLatin1(model::familyName(folder.model().config.family)),
                     modelType);
            const std::vector<long long> ids = jsonIds(expected.value("tokens").toArray());
            const Difference d =
                folder.model().config.isEncoderDecoder()
                    ? compareEncoderDecoder(
                          model::runEncoderDecoder<double>(
                              folder.model(), ids,
                              jsonIds(expected.value("decoder_tokens").toArray())),
                          expected)
                    : compareWithReference(model::runModel<double>(folder.model(), ids), expected);
            QVERIFY2(d.worst <= kTolerance, qPrintable(dir + ": " + d.where));
        }
    }

    void rowsAreFoundByFamilyAndByName() {
        QStringList names;
        for (const model::FamilyRow& row : model::familyTable()) {
            QCOMPARE(&model::familyRow(row.family), &row);
            QCOMPARE(model::familyRowNamed(row.modelType), &row);
            QVERIFY2(model::unimplementedAxes(row.architecture).empty(), row.modelType);
            QVERIFY(!row.prefixes.empty());
            names << row.modelType;
        }
        QCOMPARE(QString::fromStdString(model::supportedFamilies()), names.join(", "));
        QVERIFY(model::familyRowNamed("mt5") == nullptr);
        QCOMPARE(QString::fromStdString(model::trainableFamilyNames()),
                 QStringLiteral("llama or gpt2"));
    }

    void axesTheForwardLacksAreRefusedByName() {
        model::Architecture a = model::familyRow(model::Family::Llama).architecture;
        a.positions = model::PositionKind::Sinusoid;
        QCOMPARE(QString::fromStdString(model::unimplementedAxes(a)),
                 QStringLiteral("positions: sinusoid"));
        a.positions = model::PositionKind::RelativeBias;
        QCOMPARE(QString::fromStdString(model::unimplementedAxes(a)),
                 QStringLiteral("positions: relative bias"));
    }

    // RoBERTa numbers its positions from the ids, never from the mask: padding_idx + the
    // non-padding ids so far, padding_idx at a pad id; a rerun's later rows count the earlier.
    void positionsAfterPaddingComeFromTheIds() {
        const io::ModelFolder folder(goldenModelDir("xlm-roberta-tiny"));
        const model::Config& c = folder.model().config;
        QCOMPARE(c.paddingIdx, 1LL);
        const std::vector<long long> ids{7, 41, 1, 59, 22, 0, 0};
        QCOMPARE(model::learnedPositions(c, ids, 0), (std::vector<long long>{2, 3, 1, 4, 5, 6, 7}));
        QCOMPARE(model::learnedPositions(c, ids, 5, 3), (std::vector<long long>{4, 5, 6, 7}));
        model::Config bert = c;
        bert.family = model::Family::Bert;
        QCOMPARE(model::learnedPositions(bert, ids, 2, 5), (std::vector<long long>{7, 8}));
    }

    // 18 rows after padding_idx 1 hold 16 non-padding tokens; pad ids take no new row.
    void positionsAfterPaddingAreRefusedPastTheTable() {
        const io::ModelFolder folder(goldenModelDir("roberta-tiny"));
        std::vector<long long> ids(16, 7);
        ids.insert(ids.end(), 4, 1);  // four pads: still row 1
        model::checkInputs(folder.model().config, ids, {});
        ids.push_back(7);
        try {
            model::checkInputs(folder.model().config, ids, {});
            QFAIL("17 non-padding tokens were accepted");
        } catch (const model::ModelError& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QStringLiteral("token ids: 17 non-padding tokens need position id 18, but "
                                    "max_position_embeddings is 18 and positions start after "
                                    "padding_idx 1: at most 16 non-padding tokens fit"));
        }
    }

    // What runs is read from the config's row: a config carries its family, never its own copy
    // of the axes; only an axis its config.json decides (GPT-NeoX's use_parallel_residual)
    // overrides the row's.
    void theConfigAsksItsRowForTheArchitecture() {
        model::Config c;
        c.family = model::Family::Bert;
        QVERIFY(!c.isDecoder());
        QCOMPARE(c.architecture().placement, model::NormPlacement::Post);
        c.family = model::Family::Qwen3;
        QVERIFY(c.isDecoder() && c.rotary());
        QCOMPARE(c.architecture().qkNorm, model::QkNormKind::PerHead);
        c.family = model::Family::GptNeox;
        QCOMPARE(c.architecture().placement, model::NormPlacement::Parallel);
        c.placement = model::NormPlacement::Pre;
        QCOMPARE(c.architecture().placement, model::NormPlacement::Pre);
        QCOMPARE(c.architecture().qkv, model::QkvStorage::FusedInterleaved);
    }
};

QTEST_GUILESS_MAIN(TestFamilyTable)
#include "test_family_table.moc"
