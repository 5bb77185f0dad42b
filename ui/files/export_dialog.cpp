#include "ui/files/export_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <stdexcept>

#include "document/attention_document.h"
#include "io/formats/result_export.h"
#include "plot/effect_map.h"
#include "plot/heatmap_controller.h"
#include "plot/model_panels.h"
#include "plot/model_view_export.h"
#include "ui/files/batch_export.h"
#include "ui/setting.h"
#include "ui/window/document_maps.h"

namespace ae::ui {
namespace {

const Setting<QString> kFolder{"export/folder", {}};
const Setting<QString> kFormat{"export/format", QStringLiteral("png")};

constexpr plot::ImageFormat kFormats[] = {plot::ImageFormat::Png, plot::ImageFormat::Jpg,
                                          plot::ImageFormat::Pdf, plot::ImageFormat::Svg};

QString startFolder() {
    const QString folder = kFolder.read();
    return folder.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)
                            : folder;
}

}  // namespace

ExportDialog::ExportDialog(document::AttentionDocument* document, const plot::HeatmapGrid* grid,
                           Mode mode, QWidget* parent)
    : ExportDialog(document, grid, nullptr, nullptr, mode, parent) {}

ExportDialog::ExportDialog(const plot::ModelView* model, Mode mode, QWidget* parent)
    : ExportDialog(nullptr, nullptr, model, nullptr, mode, parent) {}

ExportDialog::ExportDialog(const plot::EffectMap* map, QWidget* parent)
    : ExportDialog(nullptr, nullptr, nullptr, map, Mode::WorkbenchMap, parent) {}

ExportDialog::ExportDialog(document::AttentionDocument* document, const plot::HeatmapGrid* grid,
                           const plot::ModelView* model, const plot::EffectMap* map, Mode mode,
                           QWidget* parent)
    : QDialog(parent),
      document_(document),
      grid_(grid),
      model_(model),
      effectMap_(map),
      mode_(mode) {
    const bool effectMode = mode == Mode::WorkbenchMap;
    if (modelMode() != (model != nullptr) || effectMode != (map != nullptr) ||
        (!modelMode() && !effectMode) != (grid != nullptr))
        throw std::invalid_argument("ExportDialog: the mode does not fit what it exports");
    setWindowTitle(mode == Mode::Image          ? tr("Export image")
                   : mode == Mode::EveryHead    ? tr("Export every head")
                   : mode == Mode::Sweep        ? tr("Export a sweep")
                   : mode == Mode::ModelImage   ? tr("Export the model view")
                   : mode == Mode::WorkbenchMap ? tr("Export a workbench map")
                                                : tr("Export every head of the model"));
    auto* form = new QFormLayout(this);
    if (mode == Mode::ModelImage) {
        maps_ = new QComboBox;
        maps_->setObjectName(QStringLiteral("mapsCombo"));
        maps_->addItems({tr("Model view: heads grid"), tr("Model view: rollout"),
                         tr("Model view: query–key map")});
        form->addRow(tr("Part"), maps_);
    }
    if (mode == Mode::Image) {
        maps_ = new QComboBox;
        maps_->setObjectName(QStringLiteral("mapsCombo"));
        maps_->addItem(
            tr("The whole grid (%n map(s))", nullptr, static_cast<int>(grid_->tiles().size())));
        for (const plot::HeatmapTile& t : grid_->tiles())
            maps_->addItem(t.controller->title());
        form->addRow(tr("Maps"), maps_);
    }
    if (mode == Mode::Sweep) {
        parameter_ = new QComboBox;
        parameter_->addItems(
            {tr("Scaling divisor (log steps)"), tr("Head count"), tr("Mask window (±n)")});
        from_ = new QDoubleSpinBox;
        to_ = new QDoubleSpinBox;
        for (QDoubleSpinBox* box : {from_, to_}) {
            box->setRange(0, 1000);
            box->setDecimals(2);
        }
        steps_ = new QSpinBox;
        steps_->setRange(2, 200);
        steps_->setValue(12);
        const Scene& scene = document_->scene();
        const auto presetRange = [this, &scene](int index) {
            const double ranges[3][2] = {{0.5, 16.0},
                                         {1.0, static_cast<double>(scene.dProj())},
                                         {0.0, static_cast<double>(scene.queryCount() - 1)}};
            from_->setValue(ranges[index][0]);
            to_->setValue(ranges[index][1]);
            steps_->setEnabled(index == 0);
        };
        connect(parameter_, &QComboBox::currentIndexChanged, this, presetRange);
        presetRange(0);
        gif_ = new QCheckBox(tr("Also an animated GIF"));
        gif_->setChecked(true);
        form->addRow(tr("Step"), parameter_);
        form->addRow(tr("From"), from_);
        form->addRow(tr("To"), to_);
        form->addRow(tr("Steps"), steps_);
        form->addRow(QString(), gif_);
    } else {
        format_ = new QComboBox;
        format_->setObjectName(QStringLiteral("formatCombo"));
        for (plot::ImageFormat f : kFormats)
            format_->addItem(plot::imageFormatSuffix(f).toUpper(), plot::imageFormatSuffix(f));
        format_->setCurrentIndex(std::max(0, format_->findData(kFormat.read())));
        connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::formatChanged);
        form->addRow(tr("Format"), format_);
    }

    // What the window shows now, at its size: the default is the screen.
    // Every head of a model: the size is one head's map (the view's parts keep 1280 x 800).
    const QSize size = grid                       ? grid->size().expandedTo(QSize(200, 150))
                       : mode == Mode::ModelImage ? model->size().expandedTo(QSize(1024, 640))
                       : map ? map->widget()->size().expandedTo(QSize(640, 480))
                             : plot::naturalImageSize(1);
    width_ = new QSpinBox;
    height_ = new QSpinBox;
    for (QSpinBox* box : {width_, height_}) {
        box->setRange(16, 20000);
        box->setSuffix(tr(" px"));
    }
    width_->setValue(size.width());
    height_->setValue(size.height());
    scale_ = new QDoubleSpinBox;
    scale_->setRange(0.25, 8.0);
    scale_->setSingleStep(0.5);
    scale_->setValue(1.0);
    scale_->setSuffix(QStringLiteral("×"));
    scale_->setToolTip(
        tr("PNG and JPG: pixels per pixel, text and lines included (2× or 3× "
           "for print). PDF and SVG are vector and ignore it."));
    auto* sizeRow = new QHBoxLayout;
    sizeRow->addWidget(width_);
    sizeRow->addWidget(new QLabel(QStringLiteral("×")));
    sizeRow->addWidget(height_);
    paper_ = new QComboBox;
    paper_->setObjectName(QStringLiteral("paperCombo"));
    paper_->addItem(tr("Pixels (below)"), -1);
    paper_->addItem(tr("One column (3.5 in)"), static_cast<int>(plot::PaperWidth::Column));
    paper_->addItem(tr("Page width (7 in)"), static_cast<int>(plot::PaperWidth::Page));
    paper_->setToolTip(tr(
        "A journal's column or page width: the maps are laid out for it and the text stays "
        "7 pt or larger. PDF pages get that width; PNG and JPG get the matching dots per inch."));
    connect(paper_, &QComboBox::currentIndexChanged, this, &ExportDialog::paperChanged);
    if (maps_) connect(maps_, &QComboBox::currentIndexChanged, this, &ExportDialog::paperChanged);
    form->addRow(tr("Print width"), paper_);
    form->addRow(tr("Size"), sizeRow);
    form->addRow(tr("Scale"), scale_);

    // What a paper's figure decides beyond the window.
    titleMode_ = new QComboBox;
    titleMode_->setObjectName(QStringLiteral("titleCombo"));
    titleMode_->addItems({tr("Each map's own"), tr("None"), tr("This title:")});
    title_ = new QLineEdit;
    title_->setObjectName(QStringLiteral("titleEdit"));
    title_->setEnabled(false);
    connect(titleMode_, &QComboBox::currentIndexChanged, this,
            [this](int index) { title_->setEnabled(index == 2); });
    auto* titleRow = new QHBoxLayout;
    titleRow->addWidget(titleMode_);
    titleRow->addWidget(title_, 1);
    form->addRow(tr("Title"), titleRow);
    entropy_ = new QCheckBox(tr("Row entropy strip beside the weights"));
    entropy_->setObjectName(QStringLiteral("entropyCheck"));
    entropy_->setChecked(grid ? grid->view().showEntropy : true);
    form->addRow(QString(), entropy_);
    colorBarLabel_ = new QLineEdit;
    colorBarLabel_->setObjectName(QStringLiteral("colorBarLabelEdit"));
    colorBarLabel_->setPlaceholderText(tr("none"));
    form->addRow(tr("Colour bar label"), colorBarLabel_);
    range_ = new QComboBox;
    range_->setObjectName(QStringLiteral("rangeCombo"));
    range_->addItems(
        {tr("Each map's own (as the window)"), tr("Shared by the maps drawn"), tr("Fixed:")});
    rangeLow_ = new QDoubleSpinBox;
    rangeHigh_ = new QDoubleSpinBox;
    for (QDoubleSpinBox* box : {rangeLow_, rangeHigh_}) {
        box->setRange(-1e6, 1e6);
        box->setDecimals(3);
        box->setEnabled(false);
    }
    rangeLow_->setObjectName(QStringLiteral("rangeLowSpin"));
    rangeHigh_->setObjectName(QStringLiteral("rangeHighSpin"));
    rangeHigh_->setValue(1.0);
    connect(range_, &QComboBox::currentIndexChanged, this, [this](int index) {
        rangeLow_->setEnabled(index == 2);
        rangeHigh_->setEnabled(index == 2);
    });
    auto* rangeRow = new QHBoxLayout;
    rangeRow->addWidget(range_);
    rangeRow->addWidget(rangeLow_);
    rangeRow->addWidget(new QLabel(tr("to")));
    rangeRow->addWidget(rangeHigh_);
    form->addRow(tr("Colour range"), rangeRow);
    decimals_ = new QSpinBox;
    decimals_->setObjectName(QStringLiteral("decimalsSpin"));
    decimals_->setRange(-1, 6);
    decimals_->setValue(-1);
    decimals_->setSpecialValueText(tr("Auto (one for the figure)"));
    decimals_->setToolTip(tr("Digits after the point in every cell (with numbers shown)."));
    form->addRow(tr("Decimals"), decimals_);

    target_ = new QLineEdit;
    target_->setObjectName(QStringLiteral("targetEdit"));
    target_->setMinimumWidth(360);
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    auto* targetRow = new QHBoxLayout;
    targetRow->addWidget(target_, 1);
    targetRow->addWidget(browse);
    const QString scene = document_ ? QFileInfo(document_->fileName()).completeBaseName() : "";
    const QString title = document_ ? QString::fromStdString(document_->scene().title) : "";
    const QString stem = !scene.isEmpty()   ? scene
                         : !title.isEmpty() ? title
                         : model            ? tr("model")
                                            : tr("scene");
    if (effectMode) {
        form->addRow(tr("File"), targetRow);
        const QString name = map->title().section(QLatin1Char('('), 0, 0).trimmed();
        target_->setText(
            QDir(startFolder())
                .filePath(QStringLiteral("%1.%2").arg(name.isEmpty() ? tr("workbench") : name,
                                                      format_->currentData().toString())));
        // One map, no numbers in its cells, no entropy strip.
        for (QWidget* field : std::initializer_list<QWidget*>{entropy_, decimals_}) {
            field->setEnabled(false);
            form->setRowVisible(field, false);
        }
    } else if (mode == Mode::ModelImage) {
        form->addRow(tr("File"), targetRow);
        target_->setText(
            QDir(startFolder())
                .filePath(
                    QStringLiteral("%1-view.%2").arg(stem, format_->currentData().toString())));
    } else if (mode == Mode::Image) {
        form->addRow(tr("File"), targetRow);
        target_->setText(QDir(startFolder())
                             .filePath(QStringLiteral("%1-%2.%3")
                                           .arg(stem, plot::stageKey(grid->stage()),
                                                format_->currentData().toString())));
    } else {
        form->addRow(tr("Folder"), targetRow);
        target_->setText(startFolder());
        base_ = new QLineEdit(stem);
        form->addRow(tr("Names start with"), base_);
    }
    if (modelMode()) {
        // The model view's parts are laid out as widgets at a size in pixels; the head maps
        // (every head) are always drawn as the window draws a head, entropy strip included.
        // Fields that do not apply are hidden rather than greyed, so the dialog stays short.
        entropy_->setEnabled(false);
        form->setRowVisible(entropy_, false);
        if (mode == Mode::ModelImage) {
            paper_->setCurrentIndex(0);
            paper_->setEnabled(false);
            for (QWidget* field : std::initializer_list<QWidget*>{
                     titleMode_, title_, colorBarLabel_, range_, rangeLow_, rangeHigh_, decimals_})
                field->setEnabled(false);
            for (QWidget* row : std::initializer_list<QWidget*>{paper_, colorBarLabel_, decimals_})
                form->setRowVisible(row, false);
            form->setRowVisible(titleRow, false);
            form->setRowVisible(rangeRow, false);
        }
    }
    // After the model modes have fixed the paper width: a PDF must not pick a column then.
    if (format_) formatChanged();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Cancel);
    buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    connect(buttons, &QDialogButtonBox::accepted, this, &ExportDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    form->addRow(buttons);
}

QString ExportDialog::target() const {
    return target_->text();
}

void ExportDialog::setTarget(const QString& path) {
    target_->setText(path);
}

QString ExportDialog::baseName() const {
    return base_ ? base_->text().trimmed() : QString();
}

int ExportDialog::mapsPerFile() const {
    if (modelMode() || mode_ == Mode::WorkbenchMap) return 1;
    const int all = static_cast<int>(grid_->tiles().size());
    if (mode_ == Mode::EveryHead) return 1;
    if (mode_ == Mode::Image && maps_->currentIndex() > 0) return 1;
    return all;
}

plot::FigureStyle ExportDialog::style() const {
    plot::FigureStyle style;
    if (titleMode_->currentIndex() == 1) style.title = QString();
    if (titleMode_->currentIndex() == 2 && !title_->text().trimmed().isEmpty())
        style.title = title_->text().trimmed();
    style.colorBarLabel = colorBarLabel_->text().trimmed();
    style.range.kind = static_cast<plot::ColorRange::Kind>(range_->currentIndex());
    style.range.low = rangeLow_->value();
    style.range.high = rangeHigh_->value();
    style.decimals = decimals_->value();
    return style;
}

// A paper's width decides the size: the boxes show it and cannot change it.
void ExportDialog::paperChanged() {
    const int paper = paper_->currentData().toInt();
    width_->setEnabled(paper < 0);
    height_->setEnabled(paper < 0);
    if (paper < 0) return;
    plot::ImageOptions options;
    plot::fitToPaper(options, mapsPerFile(), static_cast<plot::PaperWidth>(paper));
    width_->setValue(options.size.width());
    height_->setValue(options.size.height());
}

void ExportDialog::formatChanged() {
    // A PDF goes into a paper: it starts at a column's width.
    if (format_->currentData().toString() == QLatin1String("pdf") && paper_->currentIndex() == 0 &&
        paper_->isEnabled())
        paper_->setCurrentIndex(paper_->findData(static_cast<int>(plot::PaperWidth::Column)));
    if (!fileMode()) return;
    const QFileInfo file(target_->text());
    target_->setText(file.dir().filePath(file.completeBaseName() + QLatin1Char('.') +
                                         format_->currentData().toString()));
}

void ExportDialog::browse() {
    if (fileMode()) {
        const QString file =
            QFileDialog::getSaveFileName(this, tr("Export image"), target_->text(),
                                         tr("Images (*.png *.jpg *.jpeg *.pdf *.svg)"));
        if (!file.isEmpty()) {
            target_->setText(file);
            if (const std::optional<plot::ImageFormat> f = plot::imageFormatForFile(file))
                format_->setCurrentIndex(format_->findData(plot::imageFormatSuffix(*f)));
        }
    } else {
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("Export into"), target_->text());
        if (!folder.isEmpty()) target_->setText(folder);
    }
}

bool ExportDialog::exportNow(QString* error) {
    plot::GridView view;
    if (grid_) view = plot::figureView(grid_->view());
    view.showEntropy = entropy_->isChecked();
    plot::ImageOptions options;
    options.size = QSize(width_->value(), height_->value());
    options.scale = scale_->value();
    options.style = style();
    if (options.style.range.kind == plot::ColorRange::Kind::Fixed &&
        !(options.style.range.low < options.style.range.high)) {
        if (error) *error = tr("Colour range: the low end must be below the high end.");
        return false;
    }
    if (paper_->currentData().toInt() >= 0)
        fitToPaper(options, mapsPerFile(),
                   static_cast<plot::PaperWidth>(paper_->currentData().toInt()));
    try {
        if (mode_ == Mode::WorkbenchMap) {
            QString file = target_->text();
            if (!plot::imageFormatForFile(file)) {
                file += QLatin1Char('.') + format_->currentData().toString();
                target_->setText(file);
            }
            QByteArray bytes;
            try {
                bytes = effectMap_->image(*plot::imageFormatForFile(file), options);
            } catch (const io::WriteError& e) {
                throw io::WriteError(
                    QStringLiteral("%1: cannot write: %2").arg(file, e.what()).toStdString());
            }
            io::writeFileAtomically(file, bytes);
            kFolder.write(QFileInfo(file).absolutePath());
            kFormat.write(QFileInfo(file).suffix().toLower());
        } else if (mode_ == Mode::ModelImage) {
            constexpr plot::ModelViewPart kParts[] = {plot::ModelViewPart::Model,
                                                      plot::ModelViewPart::Rollout,
                                                      plot::ModelViewPart::QueryKey};
            plot::ModelViewImage image;
            image.part = kParts[maps_->currentIndex()];
            image.size = options.size;
            image.scale = options.scale;
            image.head = model_->data().openHead;
            image.presentation = model_->presentation();
            image.qkMode = model_->queryKeyPanel()->mode();
            image.position = model_->selectedPosition();
            QString file = target_->text();
            if (!plot::imageFormatForFile(file)) {
                file += QLatin1Char('.') + format_->currentData().toString();
                target_->setText(file);
            }
            const plot::ImageFormat format = *plot::imageFormatForFile(file);
            io::writeFileAtomically(file, plot::renderModelView(model_->data(), image, format));
            kFolder.write(QFileInfo(file).absolutePath());
            kFormat.write(QFileInfo(file).suffix().toLower());
        } else if (mode_ == Mode::ModelEveryHead) {
            exportEveryModelHead(model_->data(), target_->text(), baseName(),
                                 kFormats[format_->currentIndex()], options);
            kFolder.write(target_->text());
            kFormat.write(format_->currentData().toString());
        } else if (mode_ == Mode::Image) {
            plot::HeatmapGrid grid;
            nameModelLayer(grid, *document_);
            DocumentMaps gridFollowsDocument(document_, &grid);
            grid.setView(view);
            std::vector<plot::HeatmapController*> tiles = plot::gridTiles(grid);
            const int map = maps_->currentIndex() - 1;
            if (map >= 0 && map < static_cast<int>(tiles.size())) tiles = {tiles[map]};
            QString file = target_->text();
            if (!plot::imageFormatForFile(file)) {
                file += QLatin1Char('.') + format_->currentData().toString();
                target_->setText(file);
            }
            plot::saveImage(file, tiles, options);
            kFolder.write(QFileInfo(file).absolutePath());
            kFormat.write(QFileInfo(file).suffix().toLower());
        } else if (mode_ == Mode::EveryHead) {
            exportEveryHead(document_, view, target_->text(), baseName(),
                            kFormats[format_->currentIndex()], options);
            kFolder.write(target_->text());
            kFormat.write(format_->currentData().toString());
        } else {
            SweepRequest request;
            request.parameter = static_cast<SweepParameter>(parameter_->currentIndex());
            request.from = from_->value();
            request.to = to_->value();
            request.steps = steps_->value();
            request.gif = gif_->isChecked();
            exportSweep(document_->scene(), view, request, target_->text(), baseName(), options);
            kFolder.write(target_->text());
        }
    } catch (const io::WriteError& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    } catch (const std::invalid_argument& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

void ExportDialog::accept() {
    QString error;
    if (!exportNow(&error)) {
        QMessageBox::warning(this, windowTitle(), error);
        return;
    }
    emit statusMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(target())));
    QDialog::accept();
}

}  // namespace ae::ui
