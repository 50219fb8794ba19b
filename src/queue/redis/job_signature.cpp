#include <gpusched/queue/redis/job_signature.hpp>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <stdexcept>

namespace gpusched {

std::string sign_job(std::string_view key, std::string_view queue, std::string_view id,
                     std::string_view command)
{
    const std::string message = fmt::format("{}\n{}\n{}", queue, id, command);
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
             reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
             &length) == nullptr) {
        throw std::runtime_error("HMAC-SHA256 failed");
    }
    std::string hex;
    for (unsigned int i = 0; i < length; ++i) {
        hex += fmt::format("{:02x}", digest[i]);
    }
    return hex;
}

bool signature_matches(std::string_view key, std::string_view queue, std::string_view id,
                       std::string_view command, std::string_view signature)
{
    const auto expected = sign_job(key, queue, id, command);
    return signature.size() == expected.size() &&
           CRYPTO_memcmp(signature.data(), expected.data(), expected.size()) == 0;
}

} // namespace gpusched
