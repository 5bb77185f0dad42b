#pragma once
// Runs the attention-explorer binary (AE_BINARY, set by tests/CMakeLists.txt) as a real process
// and collects its exit status and output, for the tests of the command line.

#include <QByteArray>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <functional>

namespace ae::test {

struct BinaryRun {
    int exitCode = -1;  // -1 when the process crashed or timed out (err then says so)
    QByteArray out, err;
};

struct BinaryRunOptions {
    QString workingDirectory;
    int timeoutMs = 120000;
    // Runs in the child before exec, e.g. to set a resource limit.
    std::function<void()> childModifier;
};

inline BinaryRun runBinary(const QStringList& arguments, const BinaryRunOptions& options = {}) {
    QProcess process;
    process.setProgram(QStringLiteral(AE_BINARY));
    process.setArguments(arguments);
    if (!options.workingDirectory.isEmpty()) process.setWorkingDirectory(options.workingDirectory);
    if (options.childModifier) process.setChildProcessModifier(options.childModifier);
    process.start();
    BinaryRun r;
    if (!process.waitForFinished(options.timeoutMs) ||
        process.exitStatus() != QProcess::NormalExit) {
        process.kill();
        process.waitForFinished();
        r.err = "crashed or timed out";
        return r;
    }
    r.exitCode = process.exitCode();
    r.out = process.readAllStandardOutput();
    r.err = process.readAllStandardError();
    return r;
}

}  // namespace ae::test
