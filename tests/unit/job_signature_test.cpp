#include <gpusched/queue/redis/job_signature.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

SignedJob job()
{
    return SignedJob{"default", "7", "0", "echo hi", "abc", "ann", "node1"};
}

TEST(JobSignature, IsHmacSha256OfTheJobsFieldsOnePerLine)
{
    // printf 'gpusched job 2\ndefault\n7\n0\nabc\nann\nnode1\necho hi' |
    //     openssl dgst -sha256 -hmac secret
    EXPECT_EQ(sign_job("secret", job()),
              "2723cd9d31086a267beb6db5de5a3d79618ad849ab1b4c84e6ffca217aa1a1eb");
    auto first_run = job();
    first_run.attempt = "";
    EXPECT_EQ(sign_job("secret", first_run), sign_job("secret", job()))
        << "a job not retried yet has no attempt field: its attempt is 0";
}

TEST(JobSignature, EveryFieldIsCovered)
{
    const auto signature = sign_job("secret", job());
    EXPECT_TRUE(signature_matches("secret", job(), signature));
    EXPECT_FALSE(signature_matches("other", job(), signature));
    const auto changed = [&](auto change) {
        auto forged = job();
        change(forged);
        return !signature_matches("secret", forged, signature);
    };
    EXPECT_TRUE(changed([](SignedJob& j) { j.id = "8"; })) << "replayed under another id";
    EXPECT_TRUE(changed([](SignedJob& j) { j.queue = "other"; })) << "copied into another queue";
    EXPECT_TRUE(changed([](SignedJob& j) { j.attempt = "1"; })) << "made new by bumping attempt";
    EXPECT_TRUE(changed([](SignedJob& j) { j.command = "echo hi; rm -rf ~"; }));
    EXPECT_TRUE(changed([](SignedJob& j) { j.context = "abd"; })) << "another directory";
    EXPECT_TRUE(changed([](SignedJob& j) { j.context = ""; })) << "its context dropped";
    EXPECT_TRUE(changed([](SignedJob& j) { j.user = "bob"; }));
    EXPECT_TRUE(changed([](SignedJob& j) { j.host = "node2"; }));
    EXPECT_FALSE(signature_matches("secret", job(), ""));
    EXPECT_FALSE(signature_matches("secret", job(), signature.substr(1)));
}

TEST(JobSignature, TheContextDigestIsSha256)
{
    // printf x | sha256sum
    EXPECT_EQ(context_digest("x"),
              "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
}

} // namespace
} // namespace gpusched
