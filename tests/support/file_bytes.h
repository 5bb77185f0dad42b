#pragma once
// Whole files in and out, for tests that write inputs and compare outputs byte for byte.

#include <QByteArray>
#include <QFile>
#include <QString>
#include <QtTest>

namespace ae::test {

// Empty when the file cannot be read.
inline QByteArray readAll(const QString& fileName) {
    QFile file(fileName);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// QVERIFY inside: a test that cannot write its input stops there.
inline void writeAll(const QString& fileName, const QByteArray& bytes) {
    QFile file(fileName);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QCOMPARE(file.write(bytes), qint64(bytes.size()));
}

}  // namespace ae::test
