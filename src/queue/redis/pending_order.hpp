#pragma once

#include <string>

namespace gpusched::queue {

// The Lua function `place(pending, rank, id, priority, front, batch)` that puts a job into
// `pending` where its priority says (docs/queue-protocol.md, "The order of `pending`"), for
// the scripts that queue a job: submit and retry.
const std::string& pending_order_lua();

} // namespace gpusched::queue
