#include "io/scene/scene_json_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ae::io::scene_text {
namespace {

// Numbers JSON cannot hold as a finite double (NaN, Infinity, -Infinity, 1e400), which the
// reference's reader takes as non-finite floats, stand in the document as this one-key object.
// It is not a number, not a string and not an object to the checks below, so each field reports
// what the reference reports for a non-finite value.
const char kNonFiniteText[] = "{\"\\u0000non-finite\": 0}";

// Walks JSON text that QJsonDocument has already accepted and lists the keys of the object at
// `target` (a path of object keys such as "projections.bias"; objects inside lists are never
// targets) in the order they are written.
class KeyOrderScanner {
public:
    KeyOrderScanner(const QByteArray& text, const QString& target)
        : p_(text.constData()), end_(text.constData() + text.size()), target_(target) {}

    QStringList keys() {
        value(QString(), false);
        return keys_;
    }

private:
    static bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
    void skipSpace() {
        while (p_ < end_ && isSpace(*p_))
            ++p_;
    }
    QString string() {
        const char* start = p_++;
        while (p_ < end_ && *p_ != '"')
            p_ += (*p_ == '\\') ? 2 : 1;
        ++p_;
        // Let Qt decode the escapes, exactly as it did for the keys of the object.
        const QByteArray list = '[' + QByteArray(start, p_ - start) + ']';
        return QJsonDocument::fromJson(list).array().first().toString();
    }
    void value(const QString& path, bool inList) {
        skipSpace();
        if (p_ >= end_) return;
        if (*p_ == '{') {
            ++p_;
            skipSpace();
            const bool wanted = !inList && path == target_ && !found_;
            while (p_ < end_ && *p_ != '}') {
                const QString key = string();
                if (wanted && !keys_.contains(key)) keys_ << key;
                skipSpace();
                ++p_;  // ':'
                value(inList ? QString() : child(path, key), inList);
                skipSpace();
                if (p_ < end_ && *p_ == ',') ++p_;
                skipSpace();
            }
            ++p_;
            if (wanted) found_ = true;
        } else if (*p_ == '[') {
            ++p_;
            skipSpace();
            while (p_ < end_ && *p_ != ']') {
                value(QString(), true);
                skipSpace();
                if (p_ < end_ && *p_ == ',') ++p_;
                skipSpace();
            }
            ++p_;
        } else if (*p_ == '"') {
            string();
        } else {
            while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && !isSpace(*p_))
                ++p_;
        }
    }

    const char* p_;
    const char* end_;
    QString target_;
    QStringList keys_;
    bool found_ = false;
};

}  // namespace

QString child(const QString& path, const QString& key) {
    return path.isEmpty() ? key : path + "." + key;
}

bool isNonFinite(const QJsonValue& v) {
    if (!v.isObject()) return false;
    const QJsonObject o = v.toObject();
    static const QString key = QChar(0) + QStringLiteral("non-finite");
    return o.size() == 1 && o.contains(key);
}

QByteArray withReadableNumbers(const QByteArray& text) {
    QByteArray out;
    out.reserve(text.size());
    const char* p = text.constData();
    const char* const end = p + text.size();
    const auto isNumberChar = [](char c) {
        return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
    };
    while (p < end) {
        const char c = *p;
        if (c == '"') {  // a string, copied with its escapes
            const char* start = p++;
            while (p < end && *p != '"')
                p += (*p == '\\') ? 2 : 1;
            p = std::min(p + 1, end);
            out.append(start, p - start);
        } else if (c == 'N' && end - p >= 3 && std::memcmp(p, "NaN", 3) == 0) {
            out.append(kNonFiniteText);
            p += 3;
        } else if (c == 'I' && end - p >= 8 && std::memcmp(p, "Infinity", 8) == 0) {
            out.append(kNonFiniteText);
            p += 8;
        } else if (c == '-' && end - p >= 9 && std::memcmp(p, "-Infinity", 9) == 0) {
            out.append(kNonFiniteText);
            p += 9;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const char* start = p;
            while (p < end && isNumberChar(*p))
                ++p;
            double value = 0;
            const auto [next, ec] = std::from_chars(start, p, value);
            if (ec == std::errc::result_out_of_range && next == p) {
                // Over- or underflow: the decimal exponent of the first significant digit says.
                const char* mantissa = start + (*start == '-');
                const char* e =
                    std::find_if(mantissa, p, [](char d) { return d == 'e' || d == 'E'; });
                const long exponent =
                    e == p ? 0 : std::strtol(std::string(e + 1, p).c_str(), nullptr, 10);
                const char* point = std::find(mantissa, e, '.');
                const char* firstSignificant =
                    std::find_if(mantissa, e, [](char d) { return d >= '1' && d <= '9'; });
                const long position = firstSignificant < point ? point - firstSignificant - 1
                                                               : -(firstSignificant - point);
                // strtol clamps an exponent beyond long to LONG_MAX or LONG_MIN, so the sum could
                // overflow (found by fuzz_scene): compare without adding. |position| is bounded by
                // the text's length.
                const bool underflow = exponent < -position;
                out.append(underflow ? QByteArray("0") : QByteArray(kNonFiniteText));
            } else {
                out.append(start, p - start);
            }
        } else {
            out.append(c);
            ++p;
        }
    }
    return out;
}

QStringList keysInWrittenOrder(const QByteArray& text, const QString& target) {
    return KeyOrderScanner(text, target).keys();
}

}  // namespace ae::io::scene_text
