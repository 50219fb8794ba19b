// A local queue whose database is removed, or removed and made anew, while a process has it
// open (a worker, serve, wait): the rule that tells.
#include <gpusched/queue/sqlite/database_file.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched::queue {
namespace {

TEST(DatabaseFate, TheSameFileIsTheSame)
{
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, DatabaseFile{1, 10}), DatabaseFate::same);
}

TEST(DatabaseFate, NoFileAtThePathIsARemoval)
{
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, std::nullopt), DatabaseFate::removed);
}

TEST(DatabaseFate, AnotherInodeOrDeviceIsAReplacement)
{
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, DatabaseFile{1, 11}), DatabaseFate::replaced);
    EXPECT_EQ(fate_of(DatabaseFile{1, 10}, DatabaseFile{2, 10}), DatabaseFate::replaced);
}

TEST(DatabaseFate, TheMessageNamesThePathAndWhatBecameOfIt)
{
    EXPECT_EQ(fate_message("/q/queue.db", DatabaseFate::removed),
              "queue database /q/queue.db was removed");
    EXPECT_EQ(fate_message("/q/queue.db", DatabaseFate::replaced),
              "queue database /q/queue.db was replaced by another file");
    EXPECT_EQ(fate_message("/q/queue.db", DatabaseFate::same), "");
}

} // namespace
} // namespace gpusched::queue
