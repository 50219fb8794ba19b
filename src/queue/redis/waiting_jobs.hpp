#pragma once

#include <string>

namespace gpusched::queue {

// The Lua that keeps jobs submitted --after others out of `pending` until those end, for the
// scripts that end a job (finish, cancel) or queue one (submit). It uses place() of
// pending_order_lua(), which must come first. Every key is the queue's prefix and a name: a
// job's dependents are not known before it ends.
//
// A waiting job has a `waits` field (how many of the jobs it waits for have not ended) and is
// in the set `waiting`; `after:ID` holds the ids of the jobs waiting for job ID, each followed
// by '!' where it waits for ID's success (--after-ok).
//   wait_for(prefix, id, after): job `id` waits for what `after` names ("12 13!"): it joins
//     `after:ID` of each of those that has not ended; returns how many those are, and why it
//     is to be skipped (a job whose success it needs did not succeed), or nil.
//   skip(prefix, id, note, now): records a waiting job as skipped, as finish records an end.
//   settle(prefix, id, outcome, now): job `id` ended with `outcome`: the jobs waiting for it
//     are counted down and placed in `pending` when nothing else holds them, or skipped when
//     they needed it to succeed, and so on for the jobs waiting for those.
const std::string& waiting_jobs_lua();

} // namespace gpusched::queue
