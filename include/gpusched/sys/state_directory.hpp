#pragma once

#include <filesystem>
#include <optional>

namespace gpusched::sys {

// gpusched's directory for what it keeps between runs, as the XDG base directory rules place
// it: $XDG_STATE_HOME/gpusched, else ~/.local/state/gpusched; nothing when neither variable
// holds an absolute path (a relative one is ignored, as XDG says). Not made here.
std::optional<std::filesystem::path> state_directory();

// $TMPDIR when it is an absolute path, else /tmp.
std::filesystem::path temporary_directory();

} // namespace gpusched::sys
