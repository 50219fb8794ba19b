#include <gpusched/halt_policy.hpp>
#include <gpusched/joblog.hpp>
#include <gpusched/resume_state.hpp>

#include <gtest/gtest.h>

#include <csignal>

namespace gpusched {
namespace {

JoblogRecord record(JobId seq, std::string command, int exit_code = 0, int signal = 0,
                    AttemptEnd end = AttemptEnd::by_itself)
{
    return JoblogRecord{seq,    1700000000.125,     2.5,     exit_code,
                        signal, std::move(command), "GPU-1", end};
}

JoblogRecord interrupted(JobId seq, std::string command, int exit_code = 0, int signal = 0)
{
    return record(seq, std::move(command), exit_code, signal, AttemptEnd::interrupted);
}

TEST(Joblog, LineHasGnuParallelsNineColumnsWithTheGpuInHost)
{
    EXPECT_EQ(joblog_header(), "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\t"
                               "Command");
    EXPECT_EQ(format_joblog_line(record(3, "train --lr 0.1", 1, 0)),
              "3\tgpu=GPU-1\t1700000000.125\t     2.500\t0\t0\t1\t0\ttrain --lr 0.1");
    // An attempt gpusched stopped says so in Host, and exits -1 unless it failed by itself,
    // as GNU parallel logs the jobs it kills.
    EXPECT_EQ(format_joblog_line(record(3, "x", 0, 15, AttemptEnd::timeout)),
              "3\tgpu=GPU-1;timeout\t1700000000.125\t     2.500\t0\t0\t-1\t15\tx");
    EXPECT_TRUE(format_joblog_line(interrupted(3, "x", 0, 0)).ends_with("\t-1\t0\tx"));
    EXPECT_TRUE(format_joblog_line(interrupted(3, "x", 130, 0)).ends_with("\t130\t0\tx"));
    EXPECT_TRUE(format_joblog_line(interrupted(3, "x")).starts_with("3\tgpu=GPU-1;interrupted\t"));
}

TEST(Joblog, RoundTripsCommandsWithTabsInEitherLayout)
{
    for (const auto layout : {JoblogLayout::parallel, JoblogLayout::gpu_after_command}) {
        for (const auto end :
             {AttemptEnd::by_itself, AttemptEnd::timeout, AttemptEnd::interrupted}) {
            for (const int exit_code : {0, 3}) {
                const auto original =
                    record(12, "printf 'a\\tb'\tand\ttabs\tno", exit_code, 15, end);
                auto parsed = parse_joblog_line(format_joblog_line(original, layout), layout);
                ASSERT_TRUE(parsed.ok()) << parsed.message();
                const auto& back = *parsed;
                EXPECT_EQ(back.seq, 12u);
                EXPECT_EQ(back.command, original.command);
                EXPECT_EQ(back.gpu, "GPU-1");
                EXPECT_EQ(back.exit_code, exit_code);
                EXPECT_EQ(back.signal, 15);
                EXPECT_EQ(back.end, end);
                EXPECT_DOUBLE_EQ(back.start, 1700000000.125);
                EXPECT_DOUBLE_EQ(back.runtime, 2.5);
            }
        }
    }
}

TEST(Joblog, ReadsTheLinesGnuParallelWrites)
{
    // Its padded JobRuntime, its Host, a tab in a command and a newline written as NUL.
    auto parsed = parse_joblog_line(std::string("7\t:\t1700000000.250\t     0.005\t0\t0\t-1\t15\t"
                                                "printf 'a\tb'") +
                                    '\0' + "echo c");
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    EXPECT_EQ(parsed->seq, 7u);
    EXPECT_DOUBLE_EQ(parsed->runtime, 0.005);
    EXPECT_EQ(parsed->exit_code, -1);
    EXPECT_EQ(parsed->signal, 15);
    EXPECT_EQ(parsed->command, "printf 'a\tb'\necho c");
    EXPECT_EQ(parsed->gpu, "");
    EXPECT_EQ(parsed->end, AttemptEnd::by_itself);
    EXPECT_TRUE(parse_joblog_line("2\tserver1\t1700000000\t1\t10\t20\t-2\t0\tskipped").ok());
    EXPECT_EQ(format_joblog_line(*parsed).substr(0, 4), "7\t:\t");
}

TEST(Joblog, HeadersNameTheirLayout)
{
    EXPECT_EQ(joblog_layout_of_header(joblog_header()), JoblogLayout::parallel);
    EXPECT_EQ(joblog_layout_of_header(joblog_header(JoblogLayout::gpu_after_command)),
              JoblogLayout::gpu_after_command);
    EXPECT_EQ(joblog_layout_of_header("Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval"
                                      "\tSignal\tCommand\tGPU"),
              JoblogLayout::gpu_after_command);
    EXPECT_FALSE(joblog_layout_of_header("1\t:\t1700000000.000").has_value());
}

TEST(Joblog, ReadsTheLayoutOfOlderLogs)
{
    const auto older = JoblogLayout::gpu_after_command;
    auto parsed =
        parse_joblog_line("4\t:\t1700000000.000\t1.000\t0\t0\t0\t0\tcmd\twith tab\t3", older);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->command, "cmd\twith tab");
    EXPECT_EQ(parsed->gpu, "3");
    EXPECT_EQ(parsed->end, AttemptEnd::by_itself);
    parsed = parse_joblog_line("4\t:\t1700000000.000\t1.000\t0\t0\t0\t15\tcmd\t3\ttimeout", older);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->end, AttemptEnd::timeout);
    // What GNU parallel appended to such a log: its nine columns.
    parsed = parse_joblog_line("5\t:\t1700000000.000\t     1.000\t0\t0\t0\t0\tcmd", older);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->command, "cmd");
    EXPECT_EQ(parsed->gpu, "");
}

TEST(Joblog, RejectsWhatIsNotARecord)
{
    EXPECT_TRUE(is_joblog_header(joblog_header()));
    EXPECT_FALSE(parse_joblog_line(joblog_header()).ok());
    EXPECT_FALSE(parse_joblog_line("1\t:\t0").ok());
    EXPECT_TRUE(!parse_joblog_line("x\t:\t1\t1\t0\t0\t0\t0\tcmd\t0").ok());
    EXPECT_EQ(parse_joblog_line("1\tgpu=0;bogus\t1\t1\t0\t0\t0\t0\tcmd").message(),
              "bad Host 'gpu=0;bogus': must be gpu=IDS, then ;timeout or ;interrupted for an "
              "attempt gpusched stopped, ;oom, ;peak=SIZE");
    EXPECT_FALSE(parse_joblog_line("1\tgpu=0;no\t1\t1\t0\t0\t0\t0\tcmd").ok());
    for (const auto* host : {"gpu=", "gpu=0,", "gpu=,1", "gpu=0 1", "gpu=;timeout"}) {
        EXPECT_FALSE(parse_joblog_line(std::string("1\t") + host + "\t1\t1\t0\t0\t0\t0\tcmd").ok())
            << host;
    }
}

TEST(Joblog, HostKeepsAnAttemptsGpuMemoryPeakAndItsOutOfMemory)
{
    auto original = record(4, "train --lr 0.1", 1, 0, AttemptEnd::timeout);
    original.peak_memory = (std::uint64_t{20} << 30) + 1; // a byte over 20 GiB
    original.out_of_memory = true;
    const auto line = format_joblog_line(original);
    // Whole MiB, rounded up; GNU parallel reads Host as a name and the nine columns as ever.
    EXPECT_EQ(line, "4\tgpu=GPU-1;timeout;oom;peak=20481M\t1700000000.125\t     2.500\t0\t0\t1"
                    "\t0\ttrain --lr 0.1");
    const auto back = parse_joblog_line(line);
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->peak_memory, std::uint64_t{20481} << 20);
    EXPECT_TRUE(back->out_of_memory);
    EXPECT_EQ(back->end, AttemptEnd::timeout);
    EXPECT_EQ(back->gpu, "GPU-1");
    // Without a peak or an out-of-memory, Host is as before.
    EXPECT_TRUE(format_joblog_line(record(4, "x")).starts_with("4\tgpu=GPU-1\t"));
    for (const auto* host : {"gpu=0;peak=", "gpu=0;peak=12", "gpu=0;peak=nanG", "gpu=0;peak=-1G",
                             "gpu=0;oom;oom", "gpu=0;peak=1G;peak=2G", "gpu=0;timeout;timeout",
                             "gpu=0;", "gpu=0;oom;", "gpu=0;peak=99999999T",
                             // only as gpusched writes it: whole MiB, no leading zero
                             "gpu=0;peak=30G", "gpu=0;peak=0.4M", "gpu=0;peak=30000.5M",
                             "gpu=0;peak=030000M", "gpu=0;peak=1K", "gpu=0;peak=1m",
                             "gpu=0;peak=0M", "gpu=0;peak=+5M", "gpu=0;peak=1073741825M"}) {
        EXPECT_FALSE(parse_joblog_line(std::string("1\t") + host + "\t1\t1\t0\t0\t0\t0\tcmd").ok())
            << host;
    }
}

// Someone else's log cannot act on the terminal through an error that quotes it.
TEST(Joblog, AnErrorShowsWhatItQuotesAsText)
{
    using namespace std::string_literals; // the line holds a NUL byte
    const auto message =
        parse_joblog_line("1\tgpu=0;\x1b]0;pwned\x07\r\0x\t1\t1\t0\t0\t0\t0\tcmd"s).message();
    EXPECT_NE(message.find("gpu=0;\\e]0;pwned\\a\\r\\x00x"), std::string::npos) << message;
    EXPECT_NE(message.find("must be gpu=IDS"), std::string::npos) << message;
    EXPECT_EQ(parse_joblog_line("\x1b[2J\t:\t1\t1\t0\t0\t0\t0\tcmd").message(), "bad Seq '\\e[2J'");
}

TEST(Joblog, TellsATornRecordFromAFileThatIsNoLog)
{
    EXPECT_TRUE(looks_like_torn_record("12"));
    EXPECT_TRUE(looks_like_torn_record("12\t:\t1700000000.1"));
    EXPECT_FALSE(looks_like_torn_record("python train.py --lr 0.1"));
    EXPECT_FALSE(looks_like_torn_record(""));
    EXPECT_FALSE(looks_like_torn_record("12 jobs"));
}

TEST(ResumeState, ResumeSkipsEveryJobThatEnded)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(1, "a"));
    state.add(record(2, "b", 1));
    state.add(record(3, "t", 0, 15, AttemptEnd::timeout));
    EXPECT_TRUE(state.should_skip("a"));
    EXPECT_TRUE(state.should_skip("b"));
    EXPECT_TRUE(state.should_skip("t")) << "a timeout is the job's own outcome";
    EXPECT_FALSE(state.should_skip("c"));
}

TEST(ResumeState, AnInterruptedAttemptIsNeverTakenAsDone)
{
    for (const auto mode : {ResumeMode::resume, ResumeMode::resume_failed}) {
        ResumeState state(mode);
        state.add(interrupted(1, "a", 0, SIGINT));
        state.add(interrupted(2, "b", 0, 0)); // caught the signal and exited 0
        state.add(record(3, "c", 1));
        state.add(interrupted(3, "c", 0, SIGTERM)); // its retry was cut short
        EXPECT_FALSE(state.should_skip("a"));
        EXPECT_FALSE(state.should_skip("b"));
        EXPECT_FALSE(state.should_skip("c"));
    }
}

TEST(ResumeState, FindsACommandWhereverItStandsInTheInput)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(1, "a"));
    state.add(record(2, "b"));
    EXPECT_FALSE(state.should_skip("c"));
    EXPECT_TRUE(state.should_skip("b"));
    EXPECT_TRUE(state.should_skip("a"));
    EXPECT_FALSE(state.should_skip("a changed"));
}

TEST(ResumeState, ACommandListedTwiceNeedsTwoRecords)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(1, "x", 1));
    state.add(record(1, "x")); // the retry of the same job is no second job
    state.add(record(4, "y"));
    state.add(record(7, "y"));
    EXPECT_TRUE(state.should_skip("x"));
    EXPECT_FALSE(state.should_skip("x"));
    EXPECT_TRUE(state.should_skip("y"));
    EXPECT_TRUE(state.should_skip("y"));
    EXPECT_FALSE(state.should_skip("y"));
}

TEST(ResumeState, TwoRunsThatRanACommandAtTheSamePlaceFinishedTwoJobs)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(2, "a"));
    state.add(interrupted(3, "a"));
    state.add(record(2, "a")); // a later run, whose input had it at 2 as well
    EXPECT_TRUE(state.should_skip("a"));
    EXPECT_TRUE(state.should_skip("a"));
    EXPECT_FALSE(state.should_skip("a"));
}

TEST(ResumeState, ResumeFailedRunsFailuresAgain)
{
    ResumeState state(ResumeMode::resume_failed);
    state.add(record(1, "a"));
    state.add(record(2, "b", 1));
    state.add(record(3, "c", 0, 9));
    state.add(record(4, "d", 1));
    state.add(record(4, "d", 0)); // succeeded on a retry
    state.add(record(5, "e", 1));
    state.add(record(9, "e", 0)); // failed, then succeeded in a later run at another place
    EXPECT_TRUE(state.should_skip("a"));
    EXPECT_FALSE(state.should_skip("b"));
    EXPECT_FALSE(state.should_skip("c"));
    EXPECT_TRUE(state.should_skip("d"));
    EXPECT_TRUE(state.should_skip("e"));
}

TEST(ResumeState, NamesTheJobsNoInputLineMatched)
{
    ResumeState state(ResumeMode::resume);
    state.add(record(1, "a"));
    state.add(record(2, "gone"));
    state.add(interrupted(3, "also gone"));
    EXPECT_TRUE(state.should_skip("a"));
    const auto unmatched = state.unmatched();
    ASSERT_EQ(unmatched.size(), 2u);
    EXPECT_EQ(unmatched[0].seq, 2u);
    EXPECT_EQ(unmatched[0].command, "gone");
    EXPECT_EQ(unmatched[1].seq, 3u);
}

TEST(ResumeState, NoneSkipsNothing)
{
    ResumeState state(ResumeMode::none);
    state.add(record(1, "a"));
    EXPECT_FALSE(state.should_skip("a"));
}

TEST(HaltPolicy, ParsesGnuParallelsForms)
{
    const auto now_fail = HaltPolicy::parse("now,fail=2").value();
    EXPECT_EQ(now_fail.when, HaltPolicy::When::now);
    EXPECT_FALSE(now_fail.reached(10, 1));
    EXPECT_TRUE(now_fail.reached(0, 2));

    const auto percent = HaltPolicy::parse("soon,fail=50%").value();
    EXPECT_FALSE(percent.reached(3, 2));
    EXPECT_TRUE(percent.reached(2, 2));

    const auto success = HaltPolicy::parse("now,success=1").value();
    EXPECT_TRUE(success.reached(1, 0));

    const auto done = HaltPolicy::parse("soon,done=3").value();
    EXPECT_TRUE(done.reached(1, 2));

    EXPECT_FALSE(HaltPolicy::parse("never").value().reached(0, 1000));
}

TEST(HaltPolicy, RejectsOtherForms)
{
    for (const auto* text : {"", "sometimes", "now", "now,fail", "now,fail=", "now,fail=0",
                             "later,fail=1", "now,crash=1", "now,fail=150%", "now,fail=x"}) {
        EXPECT_FALSE(HaltPolicy::parse(text).ok()) << text;
    }
}

} // namespace
} // namespace gpusched
