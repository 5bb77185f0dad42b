#pragma once
// What every classroom view does with the document's changes: a hidden view skips them (a
// BERT-sized slider drag must stay fast, and the views are hidden most of the time) and catches
// up when it is next shown; a visible one redraws at once.

#include <QObject>
#include <functional>

class QEvent;
class QWidget;

namespace ae::ui {

class RefreshWhenShown : public QObject {
public:
    // Watches `view` (its parent) for being shown; `refresh` redraws the view and calls
    // refreshed().
    RefreshWhenShown(QWidget* view, std::function<void()> refresh);

    // Something the view shows has changed: redraws now if the view is visible, else on its next
    // show.
    void changed();
    // The view has just been redrawn, for whatever reason: nothing is left to catch up.
    void refreshed() { stale_ = false; }

protected:
    // Redraws a stale view before its own showEvent, as it is being shown.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* view_;
    std::function<void()> refresh_;
    bool stale_ = false;
};

}  // namespace ae::ui
