cmake_minimum_required(VERSION 3.25)
# A family is a row of the family table (core/model/family.h): only core/model/ and io/model/ may
# name one. Anywhere else, code asks a Config for its architecture or looks a row up by its
# model_type, so adding a family touches no other folder. Tests may name families.
# Run as the `family_names` ctest: cmake -DSOURCE_DIR=... -P this file.
set(failures "")
foreach(layer core io document plot ui cli bench app fuzz)
    file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cpp)
    foreach(file ${files})
        file(RELATIVE_PATH relative ${SOURCE_DIR} ${file})
        if(relative MATCHES "^(core/model|io/model)/")
            continue()
        endif()
        file(STRINGS ${file} lines REGEX "Family::")
        foreach(line ${lines})
            string(STRIP "${line}" line)
            list(APPEND failures "${relative}: names a family: ${line}")
        endforeach()
    endforeach()
endforeach()
if(failures)
    list(JOIN failures "\n" text)
    message(FATAL_ERROR "Only core/model/ and io/model/ may name a family:\n${text}")
endif()
