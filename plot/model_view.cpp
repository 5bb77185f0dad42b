#include "plot/model_view.h"

namespace ae::ui {

ModelView::ModelView(QWidget* parent) : QWidget(parent) {}
ModelView::~ModelView() = default;

void ModelView::setData(ModelViewData data) {
    data_ = std::move(data);
    const int tokens = data_.run ? static_cast<int>(data_.run->tokens.size()) : 0;
    if (selectedPosition_ < 0 || selectedPosition_ >= tokens) selectedPosition_ = tokens - 1;
    update();
}

void ModelView::setPresentation(bool on) {
    presentation_ = on;
    update();
}

void ModelView::setSelectedPosition(int position) {
    if (position == selectedPosition_) return;
    selectedPosition_ = position;
    emit positionSelected(position);
    update();
}

}  // namespace ae::ui
