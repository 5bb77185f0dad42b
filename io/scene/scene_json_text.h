#pragma once
// Private to the scene reader (io/scene/scene_reader.cpp): JSON text the reference reads but
// QJsonDocument refuses, and the order an object's keys were written in, which QJsonObject forgets.

#include <QByteArray>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace ae::io::scene_text {

// The path of field `key` inside the object at `path` ("" is the top level).
QString child(const QString& path, const QString& key);

// Whether `v` is the stand-in withReadableNumbers writes for a number that is not finite.
bool isNonFinite(const QJsonValue& v);

// The text with each number QJsonDocument refuses but the reference reads replaced: NaN and
// infinities, and numbers beyond the double range, by a stand-in isNonFinite recognises, numbers
// that underflow by 0 (as Python reads them). Outside strings only; everything else is copied as
// it is.
QByteArray withReadableNumbers(const QByteArray& text);

// The keys of the object at `target` (a path of object keys such as "projections.bias"; objects
// inside lists are never targets) in the order they are written in `text`, JSON text that
// QJsonDocument has already accepted.
QStringList keysInWrittenOrder(const QByteArray& text, const QString& target);

}  // namespace ae::io::scene_text
