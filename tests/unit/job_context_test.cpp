#include <gpusched/job_context.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

using namespace std::chrono_literals;

TEST(JobContext, EncodedAndDecodedIsTheSameWithItsOptions)
{
    JobContext context{"/home/ann/run", {"PATH=/bin", "LR=0.1"}, 027, {}};
    context.request = {.gpus = 2, .timeout = 90'500ms, .retries = 3};
    const auto decoded = decode_context(encode_context(context));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->directory, context.directory);
    EXPECT_EQ(decoded->environment, context.environment);
    EXPECT_EQ(decoded->umask, 027u);
    EXPECT_EQ(decoded->request, context.request);
}

TEST(JobContext, AContextWithoutOptionsAsksNothing)
{
    const std::string encoded("/tmp\0"
                              "0022\0"
                              "A=1\0",
                              13);
    const auto decoded = decode_context(encoded);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->request, JobRequest{});
    EXPECT_EQ(decoded->environment, std::vector<std::string>{"A=1"});
}

// Only the variables a submitter chose travel: the context says so, and a worker that does
// not know the word refuses the job rather than run it with nothing else set.
TEST(JobContext, AChosenEnvironmentIsSaidSo)
{
    JobContext context{"/home/ann/run", {"WANDB_PROJECT=p"}, 022, {}};
    EXPECT_TRUE(decode_context(encode_context(context))->whole_environment);
    context.whole_environment = false;
    const auto encoded = encode_context(context);
    EXPECT_NE(encoded.find(" chosen_environment=1"), std::string::npos);
    const auto decoded = decode_context(encoded);
    ASSERT_TRUE(decoded);
    EXPECT_FALSE(decoded->whole_environment);
    EXPECT_EQ(decoded->environment, context.environment);
}

TEST(JobContext, AnUnknownOrBadOptionIsNoContext)
{
    for (const std::string options :
         {" colour=red", " gpus=0", " gpus=two", " timeout=", "gpus=1", " gpus=1  retries=2",
          " retries=-1", " chosen_environment=0"}) {
        const auto encoded = std::string("/tmp\0"
                                         "0022",
                                         9) +
                             options + std::string("\0A=1\0", 5);
        EXPECT_FALSE(decode_context(encoded)) << options;
    }
}

} // namespace
} // namespace gpusched
