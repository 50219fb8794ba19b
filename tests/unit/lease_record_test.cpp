#include <gpusched/lease_record.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace gpusched {
namespace {

LeaseRecord sample()
{
    LeaseRecord record;
    record.user = "alice";
    record.uid = 1000;
    record.gpusched_pid = 4321;
    record.jobs = {LeaseHolder{4400, 1763712000.25, "python train.py --lr 0.1"},
                   LeaseHolder{4401, 1763712001.5, "echo \"quoted\"\ttab"}};
    return record;
}

TEST(LeaseRecord, ReadsBackWhatWasWritten)
{
    const auto text = format_lease_record(sample());
    EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line";
    const auto back = parse_lease_record(text);
    ASSERT_TRUE(back.has_value()) << text;
    EXPECT_EQ(back->user, "alice");
    EXPECT_EQ(back->uid, 1000u);
    EXPECT_EQ(back->gpusched_pid, 4321);
    ASSERT_EQ(back->jobs.size(), 2u);
    EXPECT_EQ(back->jobs[0].pid, 4400);
    EXPECT_DOUBLE_EQ(back->jobs[0].since, 1763712000.25);
    EXPECT_EQ(back->jobs[1].command, "echo \"quoted\"\ttab");
}

TEST(LeaseRecord, CarriesTheHoldersFairShareStanding)
{
    auto record = sample();
    record.used = 7200.5;
    record.share = 2;
    const auto back = parse_lease_record(format_lease_record(record));
    ASSERT_TRUE(back.has_value());
    EXPECT_DOUBLE_EQ(back->used, 7200.5);
    EXPECT_DOUBLE_EQ(back->share, 2);
    // Anyone may write a record: a standing no holder writes is the default's.
    const auto planted = parse_lease_record(R"({"user": "x", "uid": 1, "gpusched_pid": 2, )"
                                            R"("jobs": [], "used": -5, "share": 0})");
    ASSERT_TRUE(planted.has_value());
    EXPECT_EQ(planted->used, 0);
    EXPECT_EQ(planted->share, 1);
}

TEST(LeaseRecord, CarriesWhatMemoryEachJobWasPromised)
{
    auto record = sample();
    record.jobs[0].memory = std::uint64_t{30} << 30;
    const auto back = parse_lease_record(format_lease_record(record));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->jobs[0].memory, std::uint64_t{30} << 30);
    EXPECT_FALSE(back->jobs[1].memory) << "a job that asked for none";
    // A planted size that is no size is left out.
    for (const auto* size : {"-5", "1.5", "\"20G\"", "18446744073709551615"}) {
        const auto planted = parse_lease_record(
            fmt::format(R"({{"user": "x", "uid": 1, "gpusched_pid": 2, "jobs": [{{"pid": 3, )"
                        R"("since": 0, "command": "c", "memory": {}}}]}})",
                        size));
        ASSERT_TRUE(planted.has_value()) << size;
        EXPECT_FALSE(planted->jobs[0].memory) << size;
    }
}

TEST(LeaseRecord, PaddingAfterTheRecordIsAllowed)
{
    // A shorter record is written over a longer one, padded with spaces to its length.
    EXPECT_TRUE(parse_lease_record(format_lease_record(sample()) + "      \n").has_value());
}

TEST(LeaseRecord, LongCommandsAreCutAndBadUtf8Replaced)
{
    auto record = sample();
    record.jobs = {LeaseHolder{1, 0, std::string(100'000, 'x') + "\xff"}};
    const auto text = format_lease_record(record);
    EXPECT_LT(text.size(), 1000u);
    EXPECT_TRUE(parse_lease_record(text).has_value());
}

TEST(LeaseRecord, AnythingElseIsNoRecord)
{
    for (const char* text : {"", "{", "[]", "{\"user\":\"a\"}", "hello",
                             "{\"user\":1,\"uid\":1,\"gpusched_pid\":1,\"jobs\":[]}"}) {
        EXPECT_FALSE(parse_lease_record(text).has_value()) << text;
    }
}

// Anyone may write a record: a queued count that is no count is left out, not wrapped round.
TEST(LeaseRecord, ANegativeQueuedCountIsLeftOut)
{
    const auto record =
        parse_lease_record(R"({"user":"a","uid":1,"gpusched_pid":1,"queued":-5,"jobs":[]})");
    ASSERT_TRUE(record.has_value());
    EXPECT_FALSE(record->queued.has_value());
}

TEST(LeaseRecord, DescribesItsHolderForTheLog)
{
    auto record = sample();
    EXPECT_EQ(describe_lease_holder(record), "alice (gpusched pid 4321, 2 jobs)");
    record.jobs.resize(1);
    EXPECT_EQ(describe_lease_holder(record), "alice (pid 4400: python train.py --lr 0.1)");
    EXPECT_EQ(describe_lease_holder(std::nullopt), "another process");
}

TEST(LeaseOwner, ARecordCountsOnlyWhenItNamesTheTaker)
{
    const LeaseTaker taker{4321, 1000, "alice"};
    auto owner = identify_lease_owner(taker, sample());
    EXPECT_EQ(owner.check, RecordCheck::matches);
    ASSERT_TRUE(owner.record.has_value());
    EXPECT_EQ(describe_lease_holder(owner), "alice (gpusched pid 4321, 2 jobs)");

    auto planted = sample();
    planted.gpusched_pid = 1;
    owner = identify_lease_owner(taker, planted);
    EXPECT_EQ(owner.check, RecordCheck::foreign);
    EXPECT_FALSE(owner.record.has_value());
    EXPECT_EQ(describe_lease_holder(owner), "alice (pid 4321)");

    auto other_user = sample();
    other_user.uid = 0;
    EXPECT_EQ(identify_lease_owner(taker, other_user).check, RecordCheck::foreign);

    owner = identify_lease_owner(taker, std::nullopt);
    EXPECT_EQ(owner.check, RecordCheck::none);
    EXPECT_EQ(describe_lease_holder(owner), "alice (pid 4321)");
}

TEST(LeaseOwner, WithoutATakerTheRecordIsAllThereIs)
{
    const auto owner = identify_lease_owner(std::nullopt, sample());
    EXPECT_EQ(owner.check, RecordCheck::unverified);
    EXPECT_EQ(describe_lease_holder(owner), "alice (gpusched pid 4321, 2 jobs)");
    EXPECT_EQ(describe_lease_holder(LeaseOwner{}), "another process");
}

TEST(LeaseRecord, KeepsWhenTheLeaseWasTakenAndWhatIsStillQueued)
{
    auto record = sample();
    EXPECT_EQ(format_lease_record(record).find("queued"), std::string::npos);
    record.since = 1763712000.5;
    record.queued = 84;
    const auto read = parse_lease_record(format_lease_record(record));
    ASSERT_TRUE(read);
    EXPECT_DOUBLE_EQ(read->since, 1763712000.5);
    ASSERT_TRUE(read->queued);
    EXPECT_EQ(*read->queued, 84u);
    const auto older = parse_lease_record(format_lease_record(sample()));
    ASSERT_TRUE(older);
    EXPECT_FALSE(older->queued);
}

TEST(LeaseRecord, AWaiterNamesTheHolderByItsRun)
{
    auto record = sample();
    record.since = 0;
    EXPECT_EQ(describe_lease_wait(LeaseOwner{LeaseTaker{4321, 1000, "alice"}, record,
                                             RecordCheck::matches}),
              "alice's run 4321");
    EXPECT_EQ(describe_lease_wait(LeaseOwner{LeaseTaker{77, 1001, "bob"}, std::nullopt,
                                             RecordCheck::none}),
              "bob's process 77");
    EXPECT_EQ(describe_lease_wait(LeaseOwner{}), "another process");
    record.since = 1763712000;
    const auto described = describe_lease_wait(LeaseOwner{std::nullopt, record, RecordCheck::unverified});
    EXPECT_EQ(described.rfind("alice's run 4321 since ", 0), 0u) << described;
}

// `gpusched exec` became its command: the one process its record names is the taker.
TEST(LeaseRecord, AWaiterNamesAnExecByItsCommand)
{
    auto record = sample();
    record.since = 0;
    record.jobs = {LeaseHolder{4321, 1763712000, "python train.py --lr 0.1"}};
    EXPECT_TRUE(held_by_exec(record));
    const LeaseOwner owner{LeaseTaker{4321, 1000, "alice"}, record, RecordCheck::matches};
    EXPECT_EQ(describe_lease_wait(owner), "alice's exec 4321 (python train.py --lr 0.1)");
    record.jobs.front().command = std::string(60, 'x') + "\nsecond line";
    EXPECT_EQ(describe_lease_wait(LeaseOwner{owner.taker, record, RecordCheck::matches}),
              "alice's exec 4321 (" + std::string(40, 'x') + "...)");
    // A run with one job left names the run.
    record.jobs = {LeaseHolder{4400, 1763712000, "python train.py"}};
    EXPECT_FALSE(held_by_exec(record));
    EXPECT_EQ(describe_lease_wait(LeaseOwner{owner.taker, record, RecordCheck::matches}),
              "alice's run 4321");
}

} // namespace
} // namespace gpusched
