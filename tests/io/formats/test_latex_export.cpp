#include <QtTest>

#include "io/formats/latex_export.h"

class LatexExportTest : public QObject {
    Q_OBJECT
private slots:
    void writesBmatrixWithChosenDecimals() {
        ae::MatrixD m(2, 3);
        m << 0.12345, -1.5, 2.0, -0.0004, 10.0, 1.0 / 3.0;
        QCOMPARE(ae::io::latexBmatrix(m, 2),
                 QStringLiteral("\\begin{bmatrix}\n  0.12 & -1.50 & 2.00 \\\\\n"
                                "  0.00 & 10.00 & 0.33\n\\end{bmatrix}"));
        QCOMPARE(ae::io::latexBmatrix(m.topLeftCorner(1, 1), 4),
                 QStringLiteral("\\begin{bmatrix}\n  0.1235\n\\end{bmatrix}"));
    }
};

QTEST_GUILESS_MAIN(LatexExportTest)
#include "test_latex_export.moc"
