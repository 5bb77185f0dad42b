// Score terms (scene format version 2): per-head matrices added to the scores before the scale
// (DeBERTa's c2p + p2c) and after it (MPNet's relative position bias). The engine applies them
// where the model does, the file keeps them, the reader refuses a wrong count or shape naming
// the head, and the structural edits keep them with their tokens.
#include <QJsonArray>
#include <QTest>
#include <cmath>

#include "core/attention_engine.h"
#include "core/scene_edit.h"
#include "core/scene_error.h"
#include "io/scene/scene_file.h"
#include "support/scene_v2_fixtures.h"

using ae::AttentionEngine;
using ae::MatrixD;
using ae::Scene;
using aetest::smallScene;

namespace {

// Head h's term: distinct numbers a cell, as a JSON matrix (3 x 3: the small scene's tokens).
QJsonArray termMatrix(int head, double scale) {
    QJsonArray rows;
    for (int i = 0; i < 3; ++i) {
        QJsonArray row;
        for (int j = 0; j < 3; ++j)
            row.append(scale * ((head + 1) * 0.25 + (j - i) * 0.5));
        rows.append(row);
    }
    return rows;
}

QJsonArray termList(double scale, int heads = 4) {
    QJsonArray list;
    for (int h = 0; h < heads; ++h)
        list.append(termMatrix(h, scale));
    return list;
}

Scene sceneWithTerms(bool before, bool after) {
    return ae::io::parseScene(smallScene([&](QJsonObject& o) {
        QJsonObject terms;
        if (before) terms["before_scale"] = termList(1.0);
        if (after) terms["after_scale"] = termList(-0.75);
        o["score_terms"] = terms;
        o["mask"] = QJsonObject{};  // every cell visible, so every weight reads its term
    }));
}

QString parseError(const QJsonValue& terms) {
    try {
        ae::io::parseScene(smallScene([&](QJsonObject& o) { o["score_terms"] = terms; }));
    } catch (const ae::SceneError& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

}  // namespace

class TestSceneScoreTerms : public QObject {
    Q_OBJECT

private slots:
    // scaled = (scores + before) / divisor + after, in that order, and the softmax reads it.
    void termsEnterTheScaledScores() {
        const Scene scene = sceneWithTerms(true, true);
        AttentionEngine<double> engine(scene);
        engine.compute();
        QVERIFY(engine.hasStage(ae::Stage::PositionTerms));
        QVERIFY(engine.hasStage(ae::Stage::PositionBias));
        for (int h = 0; h < scene.heads; ++h) {
            const MatrixD& before = scene.scoreTerms.beforeScale[static_cast<std::size_t>(h)];
            const MatrixD& after = scene.scoreTerms.afterScale[static_cast<std::size_t>(h)];
            MatrixD expected = (engine.scores(h) + before) / engine.divisor() + after;
            QCOMPARE(engine.scaled(h), expected);
            for (Eigen::Index i = 0; i < expected.rows(); ++i) {
                const Eigen::RowVectorXd e =
                    (expected.row(i).array() - expected.row(i).maxCoeff()).exp().matrix();
                const Eigen::RowVectorXd softmax = e / e.sum();
                QVERIFY((engine.weights(h).row(i) - softmax).cwiseAbs().maxCoeff() < 1e-15);
            }
            QCOMPARE(MatrixD(engine.stageMatrix(ae::Stage::PositionTerms, h)), before);
            QCOMPARE(MatrixD(engine.stageMatrix(ae::Stage::PositionBias, h)), after);
        }
        // Each list alone, and none: a layer without terms has neither stage.
        AttentionEngine<double> beforeOnly(sceneWithTerms(true, false));
        beforeOnly.compute();
        QVERIFY(beforeOnly.hasStage(ae::Stage::PositionTerms));
        QVERIFY(!beforeOnly.hasStage(ae::Stage::PositionBias));
        QCOMPARE(beforeOnly.scaled(1),
                 MatrixD((beforeOnly.scores(1) + scene.scoreTerms.beforeScale[1]) /
                         beforeOnly.divisor()));
        AttentionEngine<double> none(sceneWithTerms(false, false));
        none.compute();
        QVERIFY(!none.hasStage(ae::Stage::PositionTerms));
        QVERIFY(!none.hasStage(ae::Stage::PositionBias));
        QCOMPARE(none.scaled(2), MatrixD(none.scores(2) / none.divisor()));
    }

    // Changing the terms redoes the scaling onwards, not the scores.
    void newTermsRescaleOnly() {
        Scene scene = sceneWithTerms(false, true);
        AttentionEngine<double> engine(scene);
        engine.compute();
        const long scores = engine.counters().scorePasses;
        ae::ScoreTerms terms = scene.scoreTerms;
        terms.afterScale[0](0, 2) += 3.0;
        engine.setScoreTerms(terms);
        engine.compute();
        QCOMPARE(engine.counters().scorePasses, scores);
        QCOMPARE(engine.scaled(0)(0, 2),
                 engine.scores(0)(0, 2) / engine.divisor() + terms.afterScale[0](0, 2));
    }

    void heldBytesMatchTheEstimate() {
        const Scene scene = sceneWithTerms(true, true);
        AttentionEngine<float> single(scene);
        single.compute();
        QCOMPARE(single.heldBytes(), ae::engineBytes(scene, sizeof(float)));
    }

    // Written and read back the same; a scene with terms is version 2.
    void fileRoundTrip() {
        const Scene scene = sceneWithTerms(true, true);
        const Scene again = ae::io::parseScene(ae::io::sceneToJson(scene));
        QString why;
        QVERIFY2(aetest::sameScene(scene, again, why), qPrintable(why));
        QCOMPARE(again.scoreTerms.beforeScale.size(), std::size_t{4});
        QVERIFY(again.usesVersion2());
    }

    void refusals_data() {
        QTest::addColumn<QJsonValue>("terms");
        QTest::addColumn<QString>("expected");
        QTest::newRow("heads") << QJsonValue(QJsonObject{{"after_scale", termList(1.0, 3)}})
                               << "score_terms.after_scale: expected one 3 x 3 matrix for each of "
                                  "the 4 heads";
        QJsonArray wrongShape = termList(1.0);
        QJsonArray head1 = wrongShape[1].toArray();
        head1.removeLast();
        wrongShape[1] = head1;
        QTest::newRow("shape") << QJsonValue(QJsonObject{{"before_scale", wrongShape}})
                               << "score_terms.before_scale[1]: expected 3x3, got 2x3";
        QTest::newRow("key") << QJsonValue(QJsonObject{{"during_scale", termList(1.0)}})
                             << "score_terms";
        QJsonArray notFinite = termList(1.0);
        QJsonArray head2 = notFinite[2].toArray();
        head2[0] = QJsonArray{0, "inf", 0};
        notFinite[2] = head2;
        QTest::newRow("value") << QJsonValue(QJsonObject{{"after_scale", notFinite}})
                               << "score_terms.after_scale[2][0][1]";
    }
    void refusals() {
        QFETCH(QJsonValue, terms);
        QFETCH(QString, expected);
        const QString error = parseError(terms);
        QVERIFY2(error.contains(expected), qPrintable(error));
    }

    // One matrix a head: the head count stays.
    void headCountStays() {
        Scene scene = sceneWithTerms(false, true);
        ae::ungroupKeyValueHeads(scene);  // nothing else holding the head count
        scene.qkNorm = {};
        Scene without = scene;
        without.scoreTerms = {};
        QVERIFY(ae::headCountAllowed(without, 2));
        QVERIFY(!ae::headCountAllowed(scene, 2));
        try {
            ae::checkHeadCount(scene, 2);
            QFAIL("a new head count was allowed");
        } catch (const ae::SceneError& e) {
            QVERIFY(QString::fromStdString(e.what()).contains("score_terms"));
        }
    }

    // A token inserted gets no term; the others keep theirs, moved with their tokens.
    void termsFollowTheirTokens() {
        Scene scene = sceneWithTerms(true, true);
        const MatrixD old = scene.scoreTerms.afterScale[3];
        ae::insertToken(scene, ae::Stream::Query, 1, "new");
        const MatrixD& now = scene.scoreTerms.afterScale[3];
        QCOMPARE(now.rows(), 4);
        QCOMPARE(now.cols(), 4);
        QCOMPARE(now(0, 0), old(0, 0));
        QCOMPARE(now(2, 3), old(1, 2));
        QCOMPARE(now.row(1).cwiseAbs().sum(), 0.0);
        QCOMPARE(now.col(1).cwiseAbs().sum(), 0.0);
        AttentionEngine<double> engine(scene);
        engine.compute();  // still a valid scene
        ae::removeToken(scene, ae::Stream::Query, 1);
        QCOMPARE(scene.scoreTerms.afterScale[3], old);
    }
};

QTEST_GUILESS_MAIN(TestSceneScoreTerms)
#include "test_scene_score_terms.moc"
