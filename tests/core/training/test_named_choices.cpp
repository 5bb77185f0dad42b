// The named-choices table (core/training/named_choices.h) both trainers' tasks are read from:
// every name parses back to its choice, a name outside the table is refused with the list the
// command line prints, and the lists read exactly as `train --task` has always written them.
#include <QtTest>
#include <string>
#include <vector>

#include "core/training/attention_training.h"
#include "core/training/model_training.h"
#include "core/training/named_choices.h"

using namespace ae;

namespace {

enum class Colour { Red, Green, Blue, Unlisted };

constexpr NamedChoices<Colour, 3> kColours(
    {{Colour::Red, "red"}, {Colour::Green, "green"}, {Colour::Blue, "blue"}}, " or ");

// Names are read at compile time too (a constexpr table is checked when it is built).
static_assert(kColours.size() == 3);
static_assert(kColours.name(Colour::Green)[0] == 'g');

// Every entry's name parses back to its choice, and every choice's name is its entry's.
template <typename Table>
void checkRoundTrip(const Table& table) {
    int entries = 0;
    for (const auto& [choice, name] : table) {
        QCOMPARE(table.fromName(name), std::optional(choice));
        QCOMPARE(std::string(table.name(choice)), std::string(name));
        ++entries;
    }
    QCOMPARE(entries, static_cast<int>(table.size()));
}

}  // namespace

class TestNamedChoices : public QObject {
    Q_OBJECT
private slots:
    void namesRoundTrip() {
        checkRoundTrip(kColours);
        checkRoundTrip(kTrainingTasks);
        checkRoundTrip(model::kModelTasks);
        QCOMPARE(kTrainingTasks.fromName("match"), std::optional(TrainingTask::Match));
        QCOMPARE(model::kModelTasks.fromName("copy-next"),
                 std::optional(model::ModelTask::CopyNext));
    }

    void unknownNamesAreRefused() {
        for (const std::string name : {"", "Red", "red ", "purple", "previous-token"})
            QVERIFY(!kColours.fromName(name));
        QVERIFY(!kTrainingTasks.fromName("induction"));  // the model trainer's, not this one's
        QVERIFY(!model::kModelTasks.fromName("Induction"));
        QCOMPARE(std::string(kColours.name(Colour::Unlisted)), std::string("?"));
    }

    void listsAndRefusals() {
        QCOMPARE(kColours.names(), std::string("red, green or blue"));
        QCOMPARE(kColours.refusal("purple"),
                 std::string("expected red, green or blue, got purple"));
        // As `train --task` words them (docs/errors.md).
        QCOMPARE(kTrainingTasks.names(), std::string("previous-token, match or first-token"));
        QCOMPARE(kTrainingTasks.refusal("sorting"),
                 std::string("expected previous-token, match or first-token, got sorting"));
        QCOMPARE(model::kModelTasks.refusal("sorting"),
                 std::string("expected induction, copy-next, previous-token, first-token, "
                             "match, got sorting"));
        constexpr NamedChoices<Colour, 1> single({{Colour::Red, "red"}}, " or ");
        QCOMPARE(single.names(), std::string("red"));
        constexpr NamedChoices<Colour, 2> pair({{Colour::Red, "red"}, {Colour::Blue, "blue"}});
        QCOMPARE(pair.names(), std::string("red, blue"));
    }

    void aTableWithATwiceGivenNameIsRefused() {
        using Entry = NamedChoices<Colour, 2>::Entry;
        const Entry sameName[] = {{Colour::Red, "red"}, {Colour::Blue, "red"}};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, (NamedChoices<Colour, 2>(sameName)));
        const Entry sameChoice[] = {{Colour::Red, "red"}, {Colour::Red, "blue"}};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, (NamedChoices<Colour, 2>(sameChoice)));
        const Entry noName[] = {{Colour::Red, "red"}, {Colour::Blue, ""}};
        QVERIFY_THROWS_EXCEPTION(std::logic_error, (NamedChoices<Colour, 2>(noName)));
    }
};

QTEST_GUILESS_MAIN(TestNamedChoices)
#include "test_named_choices.moc"
