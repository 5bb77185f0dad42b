#pragma once
// One settings key with its type and default, declared once where it is used.

#include <QSettings>
#include <QVariant>

namespace ae::ui {

template <typename T>
struct Setting {
    const char* key;
    T fallback;
    T read() const {
        return QSettings()
            .value(QLatin1String(key), QVariant::fromValue(fallback))
            .template value<T>();
    }
    void write(const T& value) const {
        QSettings().setValue(QLatin1String(key), QVariant::fromValue(value));
    }
};

}  // namespace ae::ui
