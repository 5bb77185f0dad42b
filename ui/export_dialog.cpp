#include "export_dialog.h"

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

#include "attention_document.h"
#include "batch_export.h"
#include "heatmap_controller.h"
#include "main_window.h"
#include "result_export.h"
#include "setting.h"

namespace ae::ui {
namespace {

const Setting<QString> kFolder{"export/folder", {}};
const Setting<QString> kFormat{"export/format", QStringLiteral("png")};

constexpr ImageFormat kFormats[] = {ImageFormat::Png, ImageFormat::Jpg, ImageFormat::Pdf,
                                    ImageFormat::Svg};

QString startFolder() {
    const QString folder = kFolder.read();
    return folder.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::PicturesLocation)
                            : folder;
}

}  // namespace

ExportDialog::ExportDialog(MainWindow* window, Mode mode)
    : QDialog(window), window_(window), mode_(mode) {
    setWindowTitle(mode == Mode::Image       ? tr("Export image")
                   : mode == Mode::EveryHead ? tr("Export every head")
                                             : tr("Export a sweep"));
    auto* form = new QFormLayout(this);
    const HeatmapGrid* grid = window_->grid();
    if (mode == Mode::Image) {
        maps_ = new QComboBox;
        maps_->setObjectName(QStringLiteral("mapsCombo"));
        maps_->addItem(
            tr("The whole grid (%n map(s))", nullptr, static_cast<int>(grid->tiles().size())));
        for (const HeatmapTile& t : grid->tiles())
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
        const Scene& scene = window_->document()->scene();
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
        for (ImageFormat f : kFormats)
            format_->addItem(imageFormatSuffix(f).toUpper(), imageFormatSuffix(f));
        format_->setCurrentIndex(std::max(0, format_->findData(kFormat.read())));
        connect(format_, &QComboBox::currentIndexChanged, this, &ExportDialog::formatChanged);
        form->addRow(tr("Format"), format_);
    }

    // What the window shows now, at its size: the default is the screen.
    const QSize size = grid->size().expandedTo(QSize(200, 150));
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
    form->addRow(tr("Size"), sizeRow);
    form->addRow(tr("Scale"), scale_);

    target_ = new QLineEdit;
    target_->setObjectName(QStringLiteral("targetEdit"));
    target_->setMinimumWidth(360);
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
    auto* targetRow = new QHBoxLayout;
    targetRow->addWidget(target_, 1);
    targetRow->addWidget(browse);
    const QString scene = QFileInfo(window_->document()->fileName()).completeBaseName();
    const QString title = QString::fromStdString(window_->document()->scene().title);
    const QString stem = !scene.isEmpty() ? scene : !title.isEmpty() ? title : tr("scene");
    if (mode == Mode::Image) {
        form->addRow(tr("File"), targetRow);
        target_->setText(QDir(startFolder())
                             .filePath(QStringLiteral("%1-%2.%3")
                                           .arg(stem, stageKey(grid->stage()),
                                                format_->currentData().toString())));
    } else {
        form->addRow(tr("Folder"), targetRow);
        target_->setText(startFolder());
        base_ = new QLineEdit(stem);
        form->addRow(tr("Names start with"), base_);
    }
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

void ExportDialog::formatChanged() {
    if (mode_ != Mode::Image) return;
    const QFileInfo file(target_->text());
    target_->setText(file.dir().filePath(file.completeBaseName() + QLatin1Char('.') +
                                         format_->currentData().toString()));
}

void ExportDialog::browse() {
    if (mode_ == Mode::Image) {
        const QString file =
            QFileDialog::getSaveFileName(this, tr("Export image"), target_->text(),
                                         tr("Images (*.png *.jpg *.jpeg *.pdf *.svg)"));
        if (!file.isEmpty()) {
            target_->setText(file);
            if (const std::optional<ImageFormat> f = imageFormatForFile(file))
                format_->setCurrentIndex(format_->findData(imageFormatSuffix(*f)));
        }
    } else {
        const QString folder =
            QFileDialog::getExistingDirectory(this, tr("Export into"), target_->text());
        if (!folder.isEmpty()) target_->setText(folder);
    }
}

bool ExportDialog::exportNow(QString* error) {
    AttentionDocument* document = window_->document();
    const GridView view = window_->grid()->view();
    ImageOptions options;
    options.size = QSize(width_->value(), height_->value());
    options.scale = scale_->value();
    try {
        if (mode_ == Mode::Image) {
            HeatmapGrid grid(document);
            grid.setView(view);
            std::vector<HeatmapController*> tiles = gridTiles(grid);
            const int map = maps_->currentIndex() - 1;
            if (map >= 0 && map < static_cast<int>(tiles.size())) tiles = {tiles[map]};
            QString file = target_->text();
            if (!imageFormatForFile(file)) {
                file += QLatin1Char('.') + format_->currentData().toString();
                target_->setText(file);
            }
            saveImage(file, tiles, options);
            kFolder.write(QFileInfo(file).absolutePath());
            kFormat.write(QFileInfo(file).suffix().toLower());
        } else if (mode_ == Mode::EveryHead) {
            exportEveryHead(document, view, target_->text(), baseName(),
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
            exportSweep(document->scene(), view, request, target_->text(), baseName(), options);
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
    window_->showStatusMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(target())));
    QDialog::accept();
}

}  // namespace ae::ui
