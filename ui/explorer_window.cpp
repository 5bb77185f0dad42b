#include "explorer_window.h"

#include <QApplication>
#include <QLabel>

namespace ae::ui {
int runExplorerWindow(const QString&) {
    QLabel placeholder("Attention Explorer: the window comes next.");
    placeholder.resize(640, 400);
    placeholder.show();
    return QApplication::exec();
}
}  // namespace ae::ui
