// What a shell's completion asks of a queue: the rule that takes a job, and the ids a store
// asked by id alone looks through, newest first.
#include <gpusched/queue/jobs_wanted.hpp>

#include <gtest/gtest.h>

#include <limits>

namespace gpusched::queue {
namespace {

JobRecord job(std::int64_t id, JobState state, std::string name = "", std::string user = "ann")
{
    JobRecord record;
    record.id = id;
    record.state = state;
    record.name = std::move(name);
    record.submitter.user = std::move(user);
    return record;
}

TEST(JobsWanted, TakesTheStatesAskedForOrEveryStateWhenNone)
{
    const JobsWanted unended{{JobState::queued, JobState::running, JobState::waiting}};
    EXPECT_TRUE(unended.wants(job(1, JobState::running)));
    EXPECT_TRUE(unended.wants(job(1, JobState::waiting)));
    EXPECT_FALSE(unended.wants(job(1, JobState::failed)));
    EXPECT_TRUE(JobsWanted{}.wants(job(1, JobState::succeeded)));
}

TEST(JobsWanted, ThePrefixIsTheIdsTheLabelsOrTheUsersLabels)
{
    const auto wanted = [](std::string prefix) {
        JobsWanted jobs;
        jobs.prefix = std::move(prefix);
        return jobs;
    };
    EXPECT_TRUE(wanted("12").wants(job(123, JobState::queued)));
    EXPECT_FALSE(wanted("12").wants(job(312, JobState::queued)));
    EXPECT_TRUE(wanted("sw").wants(job(7, JobState::queued, "sweep")));
    EXPECT_TRUE(wanted("ann/sw").wants(job(7, JobState::queued, "sweep")));
    EXPECT_FALSE(wanted("bob/sw").wants(job(7, JobState::queued, "sweep")));
    EXPECT_FALSE(wanted("sw").wants(job(7, JobState::queued)));
    EXPECT_FALSE(wanted("ann/").wants(job(7, JobState::queued))) << "no label, no USER/LABEL";
}

TEST(JobsWanted, AUsersJobsAreTheirsAndThoseOfNobodyInParticular)
{
    JobsWanted ann;
    ann.user = "ann";
    EXPECT_TRUE(ann.wants(job(1, JobState::queued, "", "ann")));
    EXPECT_FALSE(ann.wants(job(2, JobState::queued, "", "bob")));
    EXPECT_TRUE(ann.wants(job(3, JobState::queued, "", ""))) << "queued before users were kept";
}

std::vector<std::int64_t> all_of(IdsBeginningWith ids, std::size_t block = 3)
{
    std::vector<std::int64_t> all;
    for (auto next = ids.next(block); !next.empty(); next = ids.next(block)) {
        all.insert(all.end(), next.begin(), next.end());
    }
    return all;
}

TEST(IdsBeginningWith, EveryIdHighestFirstWithoutAPrefix)
{
    EXPECT_EQ(all_of(IdsBeginningWith(5, "")), (std::vector<std::int64_t>{5, 4, 3, 2, 1}));
    EXPECT_TRUE(all_of(IdsBeginningWith(0, "")).empty());
}

TEST(IdsBeginningWith, TheLongestIdsOfThePrefixFirstThenShorterOnes)
{
    EXPECT_EQ(all_of(IdsBeginningWith(123, "1")),
              (std::vector<std::int64_t>{123, 122, 121, 120, 119, 118, 117, 116, 115, 114, 113, 112,
                                         111, 110, 109, 108, 107, 106, 105, 104, 103, 102, 101, 100,
                                         19,  18,  17,  16,  15,  14,  13,  12,  11,  10,  1}));
    EXPECT_EQ(all_of(IdsBeginningWith(2000, "42")),
              (std::vector<std::int64_t>{429, 428, 427, 426, 425, 424, 423, 422, 421, 420, 42}))
        << "4200 and above are past the last id";
    EXPECT_EQ(all_of(IdsBeginningWith(420, "42")), (std::vector<std::int64_t>{420, 42}));
}

TEST(IdsBeginningWith, NoIdBeginsWithZeroALetterOrMoreDigitsThanTheLast)
{
    EXPECT_TRUE(all_of(IdsBeginningWith(500, "0")).empty());
    EXPECT_TRUE(all_of(IdsBeginningWith(500, "sweep")).empty());
    EXPECT_TRUE(all_of(IdsBeginningWith(500, "5000")).empty());
    EXPECT_TRUE(all_of(IdsBeginningWith(500, "501")).empty());
}

TEST(IdsBeginningWith, ABlockIsAsLongAsAskedUntilTheEnd)
{
    IdsBeginningWith ids(1'000'000, "");
    EXPECT_EQ(ids.next(200).size(), 200u);
    EXPECT_EQ(ids.next(2).front(), 1'000'000 - 200);
    IdsBeginningWith huge(std::numeric_limits<std::int64_t>::max(), "9");
    EXPECT_EQ(huge.next(1).size(), 1u) << "no overflow near the largest id";
}

} // namespace
} // namespace gpusched::queue
