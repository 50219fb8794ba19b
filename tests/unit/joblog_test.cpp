#include <gpusched/halt_policy.hpp>
#include <gpusched/joblog.hpp>
#include <gpusched/resume_state.hpp>

#include <gtest/gtest.h>

namespace gpusched {
namespace {

JoblogRecord record(JobId seq, std::string command, int exit_code = 0, int signal = 0)
{
    return JoblogRecord{seq, 1700000000.125, 2.5, exit_code, signal, std::move(command), "GPU-1"};
}

TEST(Joblog, LineHasGnuParallelsColumnsThenGpu)
{
    EXPECT_EQ(joblog_header(),
              "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\tGPU");
    EXPECT_EQ(format_joblog_line(record(3, "train --lr 0.1", 1, 0)),
              "3\t:\t1700000000.125\t2.500\t0\t0\t1\t0\ttrain --lr 0.1\tGPU-1");
}

TEST(Joblog, RoundTripsCommandsWithTabs)
{
    const auto original = record(12, "printf 'a\\tb'\tand\ttabs", 0, 15);
    auto parsed = parse_joblog_line(format_joblog_line(original));
    ASSERT_TRUE(std::holds_alternative<JoblogRecord>(parsed));
    const auto& back = std::get<JoblogRecord>(parsed);
    EXPECT_EQ(back.seq, 12u);
    EXPECT_EQ(back.command, original.command);
    EXPECT_EQ(back.gpu, "GPU-1");
    EXPECT_EQ(back.signal, 15);
    EXPECT_DOUBLE_EQ(back.start, 1700000000.125);
    EXPECT_DOUBLE_EQ(back.runtime, 2.5);
}

TEST(Joblog, RejectsWhatIsNotARecord)
{
    EXPECT_TRUE(is_joblog_header(joblog_header()));
    EXPECT_TRUE(std::holds_alternative<ParseError>(parse_joblog_line(joblog_header())));
    EXPECT_TRUE(std::holds_alternative<ParseError>(parse_joblog_line("1\t:\t0")));
    EXPECT_TRUE(
        std::holds_alternative<ParseError>(parse_joblog_line("x\t:\t1\t1\t0\t0\t0\t0\tcmd\t0")));
}

TEST(ResumeState, ResumeSkipsEveryRecordedJob)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(1, "a"));
    state.add(record(2, "b", 1));
    EXPECT_TRUE(state.should_skip(1, "a"));
    EXPECT_TRUE(state.should_skip(2, "b"));
    EXPECT_FALSE(state.should_skip(3, "c"));
}

TEST(ResumeState, MatchesSequenceNumberAndCommandTogether)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(1, "a"));
    EXPECT_FALSE(state.should_skip(1, "a changed"));
    EXPECT_FALSE(state.should_skip(2, "a"));
}

TEST(ResumeState, ResumeFailedRunsFailuresAgain)
{
    ResumeState state(ResumeMode::resume_failed);
    state.add(record(1, "a"));
    state.add(record(2, "b", 1));
    state.add(record(3, "c", 0, 9));
    state.add(record(4, "d", 1));
    state.add(record(4, "d", 0)); // succeeded on a retry
    EXPECT_TRUE(state.should_skip(1, "a"));
    EXPECT_FALSE(state.should_skip(2, "b"));
    EXPECT_FALSE(state.should_skip(3, "c"));
    EXPECT_TRUE(state.should_skip(4, "d"));
}

TEST(ResumeState, NoneSkipsNothing)
{
    ResumeState state(ResumeMode::none);
    state.add(record(1, "a"));
    EXPECT_FALSE(state.should_skip(1, "a"));
}

TEST(HaltPolicy, ParsesGnuParallelsForms)
{
    const auto now_fail = std::get<HaltPolicy>(HaltPolicy::parse("now,fail=2"));
    EXPECT_EQ(now_fail.when, HaltPolicy::When::now);
    EXPECT_FALSE(now_fail.reached(10, 1));
    EXPECT_TRUE(now_fail.reached(0, 2));

    const auto percent = std::get<HaltPolicy>(HaltPolicy::parse("soon,fail=50%"));
    EXPECT_FALSE(percent.reached(3, 2));
    EXPECT_TRUE(percent.reached(2, 2));

    const auto success = std::get<HaltPolicy>(HaltPolicy::parse("now,success=1"));
    EXPECT_TRUE(success.reached(1, 0));

    const auto done = std::get<HaltPolicy>(HaltPolicy::parse("soon,done=3"));
    EXPECT_TRUE(done.reached(1, 2));

    EXPECT_FALSE(std::get<HaltPolicy>(HaltPolicy::parse("never")).reached(0, 1000));
}

TEST(HaltPolicy, RejectsOtherForms)
{
    for (const auto* text : {"", "sometimes", "now", "now,fail", "now,fail=", "now,fail=0",
                             "later,fail=1", "now,crash=1", "now,fail=150%", "now,fail=x"}) {
        EXPECT_TRUE(std::holds_alternative<ParseError>(HaltPolicy::parse(text))) << text;
    }
}

} // namespace
} // namespace gpusched
