#include "cli/command_support.h"

#include <stdexcept>

namespace ae::cli {

void printLine(FILE* stream, const QString& text) {
    std::fputs(text.toLocal8Bit().constData(), stream);
    std::fputc('\n', stream);
}

void refuse(const QString& message) {
    throw std::invalid_argument(message.toStdString());
}

}  // namespace ae::cli
