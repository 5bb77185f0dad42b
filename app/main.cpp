#include "app/command_line.h"

int main(int argc, char** argv) {
    return ae::cli::run(argc, argv);
}
