#include <gpusched/queue/redis/job_signature.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(JobSignature, IsHmacSha256OfQueueIdAndCommand)
{
    // printf 'default\n7\necho hi' | openssl dgst -sha256 -hmac secret
    EXPECT_EQ(sign_job("secret", "default", "7", "echo hi"),
              "30be8b3b6adfe03ad546db39aef5c5119daf26f781bb9ecd18f34e279930ae54");
}

TEST(JobSignature, OnlyTheSameKeyQueueIdAndCommandMatch)
{
    const auto signature = sign_job("secret", "default", "7", "echo hi");
    EXPECT_TRUE(signature_matches("secret", "default", "7", "echo hi", signature));
    EXPECT_FALSE(signature_matches("other", "default", "7", "echo hi", signature));
    EXPECT_FALSE(signature_matches("secret", "default", "8", "echo hi", signature))
        << "replayed under another id";
    EXPECT_FALSE(signature_matches("secret", "other", "7", "echo hi", signature))
        << "copied into another queue";
    EXPECT_FALSE(signature_matches("secret", "default", "7", "echo hi; rm -rf ~", signature));
    EXPECT_FALSE(signature_matches("secret", "default", "7", "echo hi", ""));
    EXPECT_FALSE(signature_matches("secret", "default", "7", "echo hi", signature.substr(1)));
}

} // namespace
} // namespace gpusched
