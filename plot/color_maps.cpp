#include "plot/color_maps.h"

#include <initializer_list>

#include "qcustomplot.h"

namespace ae::plot {
namespace {

QCPColorGradient fromStops(std::initializer_list<const char*> colours) {
    QMap<double, QColor> stops;
    const double last = static_cast<double>(colours.size() - 1);
    int i = 0;
    for (const char* colour : colours)
        stops.insert(i++ / last, QColor(QLatin1String(colour)));
    QCPColorGradient gradient;
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setColorStops(stops);
    gradient.setLevelCount(256);
    return gradient;
}

constexpr ColorMap kAllMaps[] = {ColorMap::Viridis, ColorMap::Cividis, ColorMap::Magma,
                                 ColorMap::Gray, ColorMap::RdBu};

}  // namespace

QCPColorGradient colorGradient(ColorMap map) {
    // Nine stops each for the sequential maps, from matplotlib: perceptually uniform, readable in
    // grey and by most colour-blind viewers (cividis especially).
    switch (map) {
        case ColorMap::Viridis:
            break;
        case ColorMap::Cividis:
            return fromStops({"#00224e", "#1a386f", "#434e6c", "#61656f", "#7d7c78", "#9a9376",
                              "#bbad6d", "#ddc858", "#fee838"});
        case ColorMap::Magma:
            return fromStops({"#000004", "#1d1147", "#51127c", "#832681", "#b73779", "#e75263",
                              "#fc8961", "#fec488", "#fcfdbf"});
        case ColorMap::Gray:
            return fromStops({"#000000", "#ffffff"});
        case ColorMap::RdBu:
            return fromStops({"#67001f", "#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7",
                              "#d1e5f0", "#92c5de", "#4393c3", "#2166ac", "#053061"});
    }
    return fromStops({"#440154", "#472d7b", "#3b528b", "#2c728e", "#21918c", "#27ad81", "#5cc863",
                      "#aadc32", "#fde725"});
}

QString colorMapName(ColorMap map) {
    switch (map) {
        case ColorMap::Viridis:
            return QStringLiteral("viridis");
        case ColorMap::Cividis:
            return QStringLiteral("cividis");
        case ColorMap::Magma:
            return QStringLiteral("magma");
        case ColorMap::Gray:
            return QStringLiteral("gray");
        case ColorMap::RdBu:
            return QStringLiteral("rdbu");
    }
    return {};
}

std::optional<ColorMap> colorMapFromName(const QString& name) {
    for (ColorMap map : kAllMaps) {
        if (colorMapName(map) == name) return map;
    }
    return std::nullopt;
}

QStringList colorMapNames() {
    QStringList names;
    for (ColorMap map : kAllMaps)
        names << colorMapName(map);
    return names;
}

QCPColorGradient divergingGradient() {
    return colorGradient(ColorMap::RdBu);
}

QColor gradientColor(ColorMap map, double value, double low, double high) {
    return QColor::fromRgb(colorGradient(map).color(value, QCPRange(low, high)));
}

std::vector<QColor> gradientColors(ColorMap map, const std::vector<double>& values, double low,
                                   double high) {
    QCPColorGradient gradient = colorGradient(map);  // color() is not const: it fills a table
    const QCPRange range(low, high);
    std::vector<QColor> colours;
    colours.reserve(values.size());
    for (double value : values)
        colours.push_back(QColor::fromRgb(gradient.color(value, range)));
    return colours;
}

QCPColorGradient entropyGradient() {
    return fromStops({"#ffffff", "#dde3ea", "#b3bfcc"});
}

}  // namespace ae::plot
