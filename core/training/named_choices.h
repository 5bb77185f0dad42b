#pragma once
// A fixed set of choices, each with the one name the command line and the window know it by (the
// trainers' tasks: "previous-token", "induction", ...). The names are written once, beside their
// enum, and naming, parsing and listing all read that one table, so a choice cannot be listed but
// refused, or parsed but shown as "?". A table that names no choice, or one choice or name twice,
// does not compile (the constructor runs at compile time for a constexpr table).

#include <array>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace ae {

template <typename Choice, std::size_t N>
class NamedChoices {
public:
    struct Entry {
        Choice choice;
        const char* name;
    };

    // `entries` in the order they are listed; `lastSeparator` stands before the last name of the
    // list (", " gives "a, b, c"; " or " gives "a, b or c").
    constexpr NamedChoices(const Entry (&entries)[N], const char* lastSeparator = ", ")
        : lastSeparator_(lastSeparator) {
        for (std::size_t i = 0; i < N; ++i) {
            if (entries[i].name == nullptr || entries[i].name[0] == '\0')
                throw std::logic_error("NamedChoices: a choice without a name");
            for (std::size_t j = 0; j < i; ++j) {
                if (entries[j].choice == entries[i].choice ||
                    sameText(entries[j].name, entries[i].name))
                    throw std::logic_error("NamedChoices: a choice or a name given twice");
            }
            entries_[i] = entries[i];
        }
    }

    // "?" for a value outside the table (a cast from a bad int).
    constexpr const char* name(Choice choice) const {
        for (const Entry& entry : entries_) {
            if (entry.choice == choice) return entry.name;
        }
        return "?";
    }
    // Exact and case-sensitive; nullopt for anything not in the table.
    std::optional<Choice> fromName(const std::string& name) const {
        for (const Entry& entry : entries_) {
            if (name == entry.name) return entry.choice;
        }
        return std::nullopt;
    }
    // Every name in table order: "a, b, c", or "a, b or c" with " or " as lastSeparator.
    std::string names() const {
        std::string list;
        for (std::size_t i = 0; i < N; ++i) {
            if (i > 0) list += i + 1 == N ? lastSeparator_ : ", ";
            list += entries_[i].name;
        }
        return list;
    }
    // The one-line refusal of a name fromName() does not know: "expected a, b or c, got x".
    std::string refusal(const std::string& given) const {
        return "expected " + names() + ", got " + given;
    }

    // The entries in table order (for menus): for (const auto& [choice, name] : table).
    constexpr const Entry* begin() const { return entries_.data(); }
    constexpr const Entry* end() const { return entries_.data() + N; }
    static constexpr std::size_t size() { return N; }

private:
    static constexpr bool sameText(const char* a, const char* b) {
        for (; *a != '\0' && *a == *b; ++a, ++b) {
        }
        return *a == *b;
    }

    std::array<Entry, N> entries_{};
    const char* lastSeparator_;
};

}  // namespace ae
