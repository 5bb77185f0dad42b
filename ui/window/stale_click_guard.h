#pragma once
// Clicks that wait while the window is busy land wherever the pointer is once it is free. A head
// double-clicked in the model view opens its layer on the GUI thread and brings the maps to the
// front; clicks made meanwhile (a second double-click, impatient) then landed on the maps now
// under the pointer, enlarging one or selecting a row, seconds after they were made. The guard
// drops the clicks the window system queued while such a step ran, by their timestamps.

#include <QObject>

namespace ae::ui {

class StaleClickGuard : public QObject {
    Q_OBJECT
public:
    // Watches every input event of the application (installs itself on qApp).
    explicit StaleClickGuard(QObject* parent = nullptr);
    ~StaleClickGuard() override;

    // The timestamp of the last input event seen: the one that started the current step.
    unsigned long lastInputTimestamp() const { return lastInput_; }
    // Mouse presses, releases and double-clicks stamped after the last input and before
    // `lastInputTimestamp() + milliseconds` (the step's length) are dropped when they arrive.
    void dropClicksDuring(qint64 milliseconds);
    int droppedClicks() const { return dropped_; }

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    unsigned long lastInput_ = 0;
    unsigned long dropFrom_ = 0, dropUntil_ = 0;
    int dropped_ = 0;
};

}  // namespace ae::ui
