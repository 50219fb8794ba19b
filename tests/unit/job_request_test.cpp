#include <gpusched/job_request.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

using namespace std::chrono_literals;

TEST(JobRequest, EncodedAndDecodedIsTheSame)
{
    for (const JobRequest request :
         {JobRequest{}, JobRequest{2, 90'500ms, 3, 10}, JobRequest{std::nullopt, 1ms, 0, -20},
          JobRequest{1024, std::nullopt, std::nullopt, 19},
          JobRequest{.memory = std::uint64_t{20} << 30}, JobRequest{.memory = k_learned_memory}}) {
        const auto decoded = decode_request(encode_request(request));
        ASSERT_TRUE(decoded) << encode_request(request) << ": " << decoded.message();
        EXPECT_EQ(*decoded, request) << encode_request(request);
    }
}

TEST(JobRequest, AskingNothingIsNoWords)
{
    EXPECT_EQ(encode_request({}), "");
    EXPECT_EQ(encode_request({.gpus = 2, .nice = 5}), " gpus=2 nice=5");
}

// A word a later version adds is refused here, never dropped: a worker that cannot honour a
// request must not run the job without it.
TEST(JobRequest, AWordItDoesNotKnowOrAValueOutOfBoundsIsRefusedAndNamed)
{
    for (const std::string words :
         {" memory=20G", " mem=20G", " mem=0", " mem=Auto", " mem=1125899906842625", " gpus=0",
          " gpus=two", " timeout=", " timeout=0", "gpus=1", " gpus=1  retries=2", " retries=-1",
          " retries=1000001", " nice=20", " nice=-21", " nice=1.5", " gpus", " ",
          " gpus=99999999999999999999999"}) {
        const auto decoded = decode_request(words);
        ASSERT_FALSE(decoded) << words;
        EXPECT_NE(decoded.message().find("job request"), std::string::npos) << decoded.message();
    }
}

TEST(JobRequest, AJobsOwnMemoryIsWantedOverItsRunnersDefault)
{
    EXPECT_EQ(memory_wanted({}, {}), std::nullopt);
    EXPECT_EQ(memory_wanted({}, {.gpus = 1, .memory = 5}), 5u);
    EXPECT_EQ(memory_wanted({.memory = 7}, {.gpus = 1, .memory = 5}), 7u);
    EXPECT_EQ(encode_request({.memory = 1024}), " mem=1024");
    EXPECT_EQ(encode_request({.memory = k_learned_memory}), " mem=auto");
}

TEST(JobRequest, ARunnerCanEverRunWhatAsksNoMoreGpusThanItHas)
{
    EXPECT_TRUE(can_ever_run({}, 1, {}));
    EXPECT_FALSE(can_ever_run({}, 1, {.gpus = 2}));
    EXPECT_TRUE(can_ever_run({.gpus = 4}, 4, {}));
    EXPECT_FALSE(can_ever_run({.gpus = 5}, 4, {}));
    EXPECT_EQ(gpus_wanted({}, {.gpus = 3}), 3u);
    EXPECT_EQ(gpus_wanted({.gpus = 2}, {.gpus = 3}), 2u);
}

} // namespace
} // namespace gpusched
