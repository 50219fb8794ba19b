#include "cli/cli.hpp"

int main(int argc, char** argv)
{
    return gpusched::cli::main(argc, argv);
}
