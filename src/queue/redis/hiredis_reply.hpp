#pragma once

#include <gpusched/queue/redis/redis_command.hpp>

struct redisReply;

namespace gpusched::queue {

// A reply copied out of hiredis's structures, which hiredis frees after the call.
RedisReply copy_reply(const redisReply& reply);

} // namespace gpusched::queue
