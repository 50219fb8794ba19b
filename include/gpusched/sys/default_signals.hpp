#pragma once

#include <csignal>

namespace gpusched::sys {

// The empty set and the full set, for a child's signal mask and the signals it starts with at
// their default actions.
sigset_t no_signals();
sigset_t all_signals();

// Before this process becomes another program (exec): every signal back to its default
// action and none blocked, as a job started by gpusched gets them. What gpusched was started
// with (SIGINT ignored under a script's `&`) or set for itself is not the program's.
void reset_signals_for_exec();

// Ends this process by SIGALRM, at its default action, once `seconds` have passed, whatever
// it is waiting for then (a host name being looked up, a server that does not answer): for a
// command that must answer at once or not at all.
void end_after(unsigned seconds);

} // namespace gpusched::sys
