#include "hiredis_reply.hpp"

#include <hiredis/hiredis.h>

namespace gpusched::queue {

RedisReply copy_reply(const redisReply& reply)
{
    RedisReply copy;
    switch (reply.type) {
    case REDIS_REPLY_INTEGER:
        copy.type = RedisReply::Type::integer;
        copy.integer = reply.integer;
        break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
        copy.type = reply.type == REDIS_REPLY_STRING   ? RedisReply::Type::string
                    : reply.type == REDIS_REPLY_STATUS ? RedisReply::Type::status
                                                       : RedisReply::Type::error;
        copy.text.assign(reply.str, reply.len);
        break;
    case REDIS_REPLY_ARRAY:
        copy.type = RedisReply::Type::array;
        for (std::size_t i = 0; i < reply.elements; ++i) {
            copy.elements.push_back(copy_reply(*reply.element[i]));
        }
        break;
    default:
        break;
    }
    return copy;
}

} // namespace gpusched::queue
