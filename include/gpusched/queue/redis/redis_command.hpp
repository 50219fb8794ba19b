#pragma once

#include <gpusched/redis_url.hpp>
#include <gpusched/result.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched::queue {

// A reply from Redis, copied out of hiredis's structures.
struct RedisReply {
    enum class Type { nil, integer, string, status, error, array };
    Type type = Type::nil;
    long long integer = 0;
    std::string text; // of a string, status or error
    std::vector<RedisReply> elements;

    bool is_error() const { return type == Type::error; }
    // Redis did not know the script an EVALSHA named (it restarted, or SCRIPT FLUSH).
    bool is_unknown_script() const { return is_error() && text.starts_with("NOSCRIPT"); }
    // Redis does not let this connection do it: it gave no password where one is needed
    // (NOAUTH), a wrong one (WRONGPASS), or its user may not run the command (NOPERM).
    bool is_refused() const
    {
        return is_error() && (text.starts_with("NOAUTH") || text.starts_with("WRONGPASS") ||
                              text.starts_with("NOPERM"));
    }
    // The fields of a hash as HGETALL answers them: name, value, name, value...
    std::map<std::string, std::string> fields() const;
};

// Why a command got no answer, or not the one hoped for. Each kind is its own state in the
// log and its own retry: an error reply keeps the connection, the others end it.
enum class RedisFailure {
    cannot_connect, // no connection could be made, or logging in was refused
    timed_out,      // Redis took longer than the timeout to answer (paused, overloaded)
    lost,           // the connection broke
    error_reply,    // Redis answered with an error (out of memory, read-only replica ...)
};

const char* describe_failure(RedisFailure failure);

// An error reply as a failure: `refused` when Redis does not let the connection do it (its
// words then say so), else of no particular kind (out of memory, a read-only replica ...).
Failure error_reply_failure(const RedisReply& reply);
// An error reply to logging in to `url`, saying which password is wrong where that is why.
Failure login_failure(const RedisUrl& url, const RedisReply& reply);

// The commands that log a new connection in: AUTH (when the URL has a password), SELECT
// (when it names a database other than 0).
std::vector<std::vector<std::string>> login_commands(const RedisUrl& url);

// A Lua script of the queue's protocol. Connections load it once (SCRIPT LOAD) and call it
// by its SHA-1 (EVALSHA); its text goes over the wire again only when Redis forgot it.
class LuaScript {
public:
    explicit LuaScript(std::string source);
    const std::string& source() const { return m_source; }
    const std::string& sha1() const { return m_sha1; }

private:
    std::string m_source;
    std::string m_sha1;
};

// What is sent to Redis: plain words, or a script with every key it touches (so that Redis
// Cluster can route it) and its arguments.
struct RedisCommand {
    std::vector<std::string> words; // a plain command
    const LuaScript* script = nullptr;
    std::vector<std::string> keys;
    std::vector<std::string> args;

    static RedisCommand plain(std::vector<std::string> words)
    {
        return {std::move(words), nullptr, {}, {}};
    }
    static RedisCommand call(const LuaScript& script, std::vector<std::string> keys,
                             std::vector<std::string> args)
    {
        return {{}, &script, std::move(keys), std::move(args)};
    }

    // The words sent: EVALSHA (or EVAL with `by_source`) for a script.
    std::vector<std::string> to_words(bool by_source = false) const;
};

} // namespace gpusched::queue
