#include <gpusched/queue/redis/redis_command.hpp>

#include <fmt/format.h>
#include <openssl/evp.h>

#include <stdexcept>

namespace gpusched::queue {

std::map<std::string, std::string> RedisReply::fields() const
{
    std::map<std::string, std::string> fields;
    for (std::size_t i = 0; i + 1 < elements.size(); i += 2) {
        fields[elements[i].text] = elements[i + 1].text;
    }
    return fields;
}

const char* describe_failure(RedisFailure failure)
{
    switch (failure) {
    case RedisFailure::cannot_connect:
        return "cannot connect";
    case RedisFailure::timed_out:
        return "no answer in time";
    case RedisFailure::lost:
        return "connection lost";
    case RedisFailure::error_reply:
        return "error reply";
    }
    return "?";
}

Failure error_reply_failure(const RedisReply& reply)
{
    return Failure{reply.is_refused() ? FailureKind::refused : FailureKind::other, reply.text};
}

Failure login_failure(const RedisUrl& url, const RedisReply& reply)
{
    const auto where = describe_redis_url(url);
    // Redis before 6 words a wrong password "ERR invalid password".
    const bool wrong_password = reply.text.starts_with("WRONGPASS") ||
                                (reply.is_error() && reply.text.ends_with("invalid password"));
    if (!reply.is_refused() && !wrong_password) {
        return Failure{fmt::format("{}: {}", where, reply.text)};
    }
    // Trying again would be refused again: say what to change.
    if (reply.text.starts_with("NOAUTH")) {
        return Failure{FailureKind::refused,
                       fmt::format("{}: the server wants a password and none was given (give it "
                                   "in the URL, redis://:PASSWORD@HOST, or in $REDISCLI_AUTH): {}",
                                   where, reply.text)};
    }
    if (wrong_password) {
        return Failure{FailureKind::refused,
                       fmt::format("{}: the server refused the password (a wrong one, or a user "
                                   "that is disabled): {}",
                                   where, reply.text)};
    }
    return Failure{FailureKind::refused, fmt::format("{}: {}", where, reply.text)};
}

std::vector<std::vector<std::string>> login_commands(const RedisUrl& url)
{
    std::vector<std::vector<std::string>> login;
    if (url.password) {
        login.push_back(url.user.empty()
                            ? std::vector<std::string>{"AUTH", *url.password}
                            : std::vector<std::string>{"AUTH", url.user, *url.password});
    }
    if (url.db != 0) {
        login.push_back({"SELECT", std::to_string(url.db)});
    }
    return login;
}

LuaScript::LuaScript(std::string source) : m_source(std::move(source))
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(m_source.data(), m_source.size(), digest, &length, EVP_sha1(), nullptr) != 1) {
        throw std::runtime_error("SHA-1 failed");
    }
    for (unsigned int i = 0; i < length; ++i) {
        m_sha1 += fmt::format("{:02x}", digest[i]);
    }
}

std::vector<std::string> RedisCommand::to_words(bool by_source) const
{
    if (script == nullptr) {
        return words;
    }
    std::vector<std::string> sent = {by_source ? "EVAL" : "EVALSHA",
                                     by_source ? script->source() : script->sha1(),
                                     std::to_string(keys.size())};
    sent.insert(sent.end(), keys.begin(), keys.end());
    sent.insert(sent.end(), args.begin(), args.end());
    return sent;
}

} // namespace gpusched::queue
