#pragma once

namespace gpusched::cli {

// Parses argv, runs the chosen command and returns the process exit status. Every error
// is caught here once, printed as "gpusched: error: ...", and mapped to an exit status.
int main(int argc, char** argv);

} // namespace gpusched::cli
