// The records of each attempt, against real files: a job log that refuses lines (a file size
// limit, RLIMIT_FSIZE, stands in for a full disk, as write(2) fails with EFBIG the same way)
// and an output directory that is gone.
#include <gpusched/sys/attempt_records.hpp>

#include <spdlog/spdlog.h>

#include "temp_directory.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpusched::sys {
namespace {

namespace fs = std::filesystem;

// While it lives, no file of this process grows past `bytes` (SIGXFSZ ignored: the write
// fails with EFBIG instead).
class FileSizeLimit {
public:
    explicit FileSizeLimit(std::uintmax_t bytes)
    {
        getrlimit(RLIMIT_FSIZE, &m_before);
        rlimit limit = m_before;
        limit.rlim_cur = bytes;
        m_handler = std::signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &limit);
    }
    ~FileSizeLimit()
    {
        setrlimit(RLIMIT_FSIZE, &m_before);
        std::signal(SIGXFSZ, m_handler);
    }
    FileSizeLimit(const FileSizeLimit&) = delete;
    FileSizeLimit& operator=(const FileSizeLimit&) = delete;

private:
    rlimit m_before{};
    void (*m_handler)(int) = nullptr;
};

class AttemptRecordsTest : public ::testing::Test {
protected:
    AttemptRecordsTest()
    {
        m_dir = testing::make_temp_directory("gpusched-records");
        spdlog::set_level(spdlog::level::off);
    }
    ~AttemptRecordsTest() override
    {
        spdlog::set_level(spdlog::level::info);
        fs::remove_all(m_dir);
    }

    static JoblogRecord record(JobId id)
    {
        return JoblogRecord{id, 1'800'000'000.0, 1.5, 0, 0, "echo " + std::to_string(id), "0"};
    }
    // The jobs of the job log's lines, in order.
    std::vector<JobId> logged() const
    {
        std::vector<JobId> jobs;
        std::ifstream file(joblog_path());
        std::string line;
        std::getline(file, line); // the header
        while (std::getline(file, line)) {
            jobs.push_back(parse_joblog_line(line).value().seq);
        }
        return jobs;
    }
    fs::path joblog_path() const { return m_dir / "joblog"; }

    fs::path m_dir;
};

TEST_F(AttemptRecordsTest, WritesEachAttemptsLineInTheJobLogAndItsInfoFile)
{
    JoblogFile joblog(joblog_path().string());
    const OutputFiles files(m_dir / "out");
    AttemptRecords records(&joblog, &files);
    records.write(record(1), 1);
    records.write(record(2), 1);
    records.write(record(2), 2);
    EXPECT_EQ(logged(), (std::vector<JobId>{1, 2, 2}));
    EXPECT_TRUE(fs::exists(output_base(m_dir / "out", 1, 1).string() + ".info"));
    EXPECT_TRUE(fs::exists(output_base(m_dir / "out", 2, 2).string() + ".info"));
    EXPECT_FALSE(records.may_be_lost(1));
    EXPECT_TRUE(records.finish().empty());
}

TEST_F(AttemptRecordsTest, LinesTheLogRefusesAreWrittenInOrderOnceItTakesOneAgain)
{
    JoblogFile joblog(joblog_path().string());
    AttemptRecords records(&joblog, nullptr);
    records.write(record(1), 1);
    {
        const FileSizeLimit full(fs::file_size(joblog_path()));
        records.write(record(2), 1);
        records.write(record(3), 1);
        EXPECT_EQ(records.unwritten(), 2u);
        EXPECT_TRUE(records.may_be_lost(2));
        EXPECT_TRUE(records.may_be_lost(7)) << "any job's, while a line waits";
    }
    EXPECT_EQ(logged(), (std::vector<JobId>{1})) << "no part of a refused line stays";
    records.write(record(4), 1);
    EXPECT_EQ(logged(), (std::vector<JobId>{1, 2, 3, 4}));
    EXPECT_FALSE(records.may_be_lost(2));
    EXPECT_TRUE(records.finish().empty());
}

TEST_F(AttemptRecordsTest, LinesStillRefusedAtTheEndAreLost)
{
    JoblogFile joblog(joblog_path().string());
    AttemptRecords records(&joblog, nullptr);
    records.write(record(1), 1);
    const FileSizeLimit full(fs::file_size(joblog_path()));
    records.write(record(2), 1);
    records.write(record(3), 1);
    EXPECT_EQ(records.finish(), (std::set<JobId>{2, 3}));
    EXPECT_EQ(records.unwritten(), 0u);
}

TEST_F(AttemptRecordsTest, AnInfoFileThatCannotBeWrittenLosesItsJobsRecordAlone)
{
    JoblogFile joblog(joblog_path().string());
    const OutputFiles files(m_dir / "out");
    AttemptRecords records(&joblog, &files);
    fs::remove_all(m_dir / "out");
    records.write(record(1), 1);
    EXPECT_TRUE(records.may_be_lost(1));
    EXPECT_FALSE(records.may_be_lost(2));
    EXPECT_EQ(logged(), (std::vector<JobId>{1})) << "the job log has it all the same";
    EXPECT_EQ(records.finish(), (std::set<JobId>{1}));
}

TEST_F(AttemptRecordsTest, KeepsNoneWithoutALogOrAnOutputDirectory)
{
    AttemptRecords records(nullptr, nullptr);
    EXPECT_FALSE(records.keeps_any());
    EXPECT_TRUE(records.finish().empty());
}

} // namespace
} // namespace gpusched::sys
