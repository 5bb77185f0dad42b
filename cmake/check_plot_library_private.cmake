cmake_minimum_required(VERSION 3.25)
# QCustomPlot is plot/'s own business: the charts there take series, titles, ranges and markers,
# and the window, the sub-commands, the benchmarks and main() ask them, never the library. So
# no source or CMakeLists.txt under ui/, cli/, app/ or bench/ may include qcustomplot.h, link it or
# name one of its types (QCustomPlot, QCP…), not even in a comment or a forward declaration.
# Tests may reach into the plots through the charts' accessors.
# Run as the `plot_library_private` ctest: cmake -DSOURCE_DIR=... -P this file.
set(library_name "[Qq][Cc][Uu][Ss][Tt][Oo][Mm][Pp][Ll][Oo][Tt]|QCP[A-Za-z_:]")
set(failures "")
foreach(layer ui cli app bench)
    file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cpp
         ${SOURCE_DIR}/${layer}/CMakeLists.txt)
    foreach(file ${files})
        file(RELATIVE_PATH relative ${SOURCE_DIR} ${file})
        file(STRINGS ${file} lines REGEX "${library_name}")
        foreach(line ${lines})
            # A line with a semicolon comes back in pieces: keep the pieces that name it.
            if(line MATCHES "${library_name}")
                string(STRIP "${line}" line)
                list(APPEND failures "${relative}: ${line}")
            endif()
        endforeach()
    endforeach()
endforeach()
if(failures)
    list(JOIN failures "\n" text)
    message(FATAL_ERROR "Outside plot/, QCustomPlot is reached (ask a chart in plot/):\n${text}")
endif()
message(STATUS "QCustomPlot stays inside plot/")
