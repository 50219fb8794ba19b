#include <gpusched/queue/redis/job_signature.hpp>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace gpusched {
namespace {

std::string hex(const unsigned char* bytes, unsigned int length)
{
    std::string text;
    text.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        text += fmt::format("{:02x}", bytes[i]);
    }
    return text;
}

} // namespace

std::string sign_job(std::string_view key, const SignedJob& job)
{
    // The command is last: it is the one field that may hold a newline.
    const std::string message = fmt::format("gpusched job 2\n{}\n{}\n{}\n{}\n{}\n{}\n{}", job.queue,
                                            job.id, job.attempt.empty() ? "0" : job.attempt,
                                            job.context, job.user, job.host, job.command);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
             &length) == nullptr) {
        throw std::runtime_error("HMAC-SHA256 failed");
    }
    return hex(digest, length);
}

bool signature_matches(std::string_view key, const SignedJob& job, std::string_view signature)
{
    const auto expected = sign_job(key, job);
    return signature.size() == expected.size() &&
           CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) == 0;
}

std::string context_digest(std::string_view encoded)
{
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(encoded.data(), encoded.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("SHA-256 failed");
    }
    return hex(digest, length);
}

} // namespace gpusched
