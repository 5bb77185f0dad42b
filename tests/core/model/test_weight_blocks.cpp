// The LM head read in blocks of rows (core/model/forward_ops.h's projectByWeightRows): a BF16 or
// F16 table larger than one block gives exactly the logits of the table converted whole, block
// edges included, and an F32 table is multiplied in place.

#include <QtTest>
#include <cstring>
#include <vector>

#include "core/model/forward_ops.h"

using namespace ae;
using namespace ae::model;

namespace {

// BF16 of x: its float's top 16 bits, rounded to nearest even.
std::uint16_t toBf16(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

}  // namespace

class TestWeightBlocks : public QObject {
    Q_OBJECT
private slots:
    void blocksGiveTheWholeTablesLogits() {
        // Two full blocks and a partial third, so every edge between blocks is crossed.
        const long long rows = 2 * forward::kWeightRowBlock + 37, cols = 24;
        std::vector<std::uint16_t> stored(static_cast<std::size_t>(rows * cols));
        for (std::size_t i = 0; i < stored.size(); ++i)
            stored[i] = toBf16(std::sin(0.37f * static_cast<float>(i)) * 0.5f);
        TensorRef head;
        head.name = "lm_head.weight";
        head.dtype = DType::BF16;
        head.rows = rows;
        head.cols = cols;
        head.data = reinterpret_cast<const unsigned char*>(stored.data());

        Matrix<float> hidden = Matrix<float>::Random(5, cols);
        Matrix<float> blocked;
        forward::projectByWeightRows(hidden, head, blocked, 2);

        // The whole table converted, then one product: what the head did before.
        const forward::WeightView<float> whole(head), none;
        Matrix<float> expected;
        forward::project(hidden, whole, false, none, expected, 2);
        QCOMPARE(blocked.rows(), expected.rows());
        QCOMPARE(blocked.cols(), expected.cols());
        QCOMPARE((blocked - expected).cwiseAbs().maxCoeff(), 0.0f);

        // A check that can fail: a row of the table changed changes that logit.
        stored[static_cast<std::size_t>((forward::kWeightRowBlock + 3) * cols)] = toBf16(9.0f);
        Matrix<float> changed;
        forward::projectByWeightRows(hidden, head, changed, 2);
        QVERIFY(changed.col(forward::kWeightRowBlock + 3) !=
                blocked.col(forward::kWeightRowBlock + 3));
    }

    void f32TableIsMultipliedInPlace() {
        const long long rows = forward::kWeightRowBlock + 5, cols = 8;
        std::vector<float> stored(static_cast<std::size_t>(rows * cols));
        for (std::size_t i = 0; i < stored.size(); ++i)
            stored[i] = std::cos(0.11f * static_cast<float>(i));
        TensorRef head;
        head.name = "lm_head.weight";
        head.dtype = DType::F32;
        head.rows = rows;
        head.cols = cols;
        head.data = reinterpret_cast<const unsigned char*>(stored.data());
        Matrix<float> hidden = Matrix<float>::Random(3, cols), logits;
        forward::projectByWeightRows(hidden, head, logits, 2);
        const Eigen::Map<const Matrix<float>> table(stored.data(), rows, cols);
        QVERIFY((logits - hidden * table.transpose()).cwiseAbs().maxCoeff() < 1e-5f);
    }
};

QTEST_APPLESS_MAIN(TestWeightBlocks)
#include "test_weight_blocks.moc"
