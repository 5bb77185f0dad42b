#pragma once
// The row and column labels of the classroom views' own maps: the tokens, or a matrix's indices.

#include <Eigen/Core>
#include <QString>
#include <QStringList>
#include <string>
#include <vector>

namespace ae::ui {

// One label per token, as the scene spells it.
inline QStringList tokenLabels(const std::vector<std::string>& tokens) {
    QStringList list;
    for (const std::string& t : tokens)
        list << QString::fromStdString(t);
    return list;
}

// 0, 1, … count − 1: a matrix's rows or columns.
inline QStringList indexLabels(Eigen::Index count) {
    QStringList list;
    for (Eigen::Index i = 0; i < count; ++i)
        list << QString::number(i);
    return list;
}

}  // namespace ae::ui
