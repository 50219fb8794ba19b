#pragma once

#include <gpusched/result.hpp>

#include <string>
#include <vector>

namespace gpusched::sys {

// Where a run saves the commands it read from pipes and FIFOs but did not start: they cannot
// be read again, so they go to a file that can be given back to gpusched as it is.
//
// Writes `lines` (lines of a command file, without their newlines) to a new file of mode
// 0600 named unstarted-DATE-TIME-PID.txt in $XDG_STATE_HOME/gpusched (by default
// ~/.local/state/gpusched), or where that fails, gpusched-unstarted-DATE-TIME-PID.txt in
// $TMPDIR (by default /tmp). Returns the file's path, or why no place would take it.
Result<std::string> save_unstarted_commands(const std::vector<std::string>& lines);

} // namespace gpusched::sys
