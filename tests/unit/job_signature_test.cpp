#include <gpusched/queue/job_signature.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(JobSignature, IsHmacSha256OfIdAndCommand)
{
    // printf '7\necho hi' | openssl dgst -sha256 -hmac secret
    EXPECT_EQ(sign_job("secret", "7", "echo hi"),
              "f25717f376a9b4285283f5958ca10a01dfb638e58a4792c977b551c2574a636c");
}

TEST(JobSignature, OnlyTheSameKeyIdAndCommandMatch)
{
    const auto signature = sign_job("secret", "7", "echo hi");
    EXPECT_TRUE(signature_matches("secret", "7", "echo hi", signature));
    EXPECT_FALSE(signature_matches("other", "7", "echo hi", signature));
    EXPECT_FALSE(signature_matches("secret", "8", "echo hi", signature))
        << "replayed under another id";
    EXPECT_FALSE(signature_matches("secret", "7", "echo hi; rm -rf ~", signature));
    EXPECT_FALSE(signature_matches("secret", "7", "echo hi", ""));
    EXPECT_FALSE(signature_matches("secret", "7", "echo hi", signature.substr(1)));
}

} // namespace
} // namespace gpusched
