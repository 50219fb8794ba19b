#include <gpusched/job_environment.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpusched {
namespace {

std::vector<std::string> strings(const std::vector<char*>& envp)
{
    EXPECT_EQ(envp.back(), nullptr);
    std::vector<std::string> result;
    for (std::size_t i = 0; i + 1 < envp.size(); ++i) {
        result.emplace_back(envp[i]);
    }
    return result;
}

TEST(JobEnvironment, ReplacesPerJobVariablesAndKeepsTheRest)
{
    const char* environ[] = {"PATH=/bin",         "CUDA_VISIBLE_DEVICES=0,1",
                             "GPUSCHED_JOB_ID=9", "GPUSCHED_GPU_EXTRA=kept",
                             "HOME=/root",        nullptr};
    const JobEnvironment environment(environ);
    JobEnvironment::JobVariables storage;
    const auto envp = strings(environment.for_job(7, "GPU-abc", storage));
    EXPECT_EQ(envp, (std::vector<std::string>{"PATH=/bin", "GPUSCHED_GPU_EXTRA=kept", "HOME=/root",
                                              "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                              "CUDA_VISIBLE_DEVICES=GPU-abc", "GPUSCHED_JOB_ID=7",
                                              "GPUSCHED_GPU=GPU-abc"}));
}

TEST(JobEnvironment, KeepsTheUsersDeviceOrder)
{
    const char* environ[] = {"CUDA_DEVICE_ORDER=FASTEST_FIRST", nullptr};
    const JobEnvironment environment(environ);
    JobEnvironment::JobVariables storage;
    const auto envp = strings(environment.for_job(1, "0", storage));
    EXPECT_EQ(envp[0], "CUDA_DEVICE_ORDER=FASTEST_FIRST");
    EXPECT_EQ(std::count(envp.begin(), envp.end(), "CUDA_DEVICE_ORDER=PCI_BUS_ID"), 0);
}

// A job submitted with its whole environment gets it, not the worker's; one that carried only
// chosen variables gets those over the worker's own.
TEST(JobEnvironment, ASubmittedEnvironmentIsWholeOrSetOverTheWorkers)
{
    const char* environ[] = {"PATH=/worker/bin", "HOME=/home/worker", nullptr};
    const JobEnvironment worker(environ);
    JobEnvironment::JobVariables storage;
    const std::vector<std::string> submitted = {"PATH=/ann/bin", "LR=0.1",
                                                "CUDA_VISIBLE_DEVICES=5"};
    EXPECT_EQ(strings(worker.for_submitted(submitted).for_job(1, "0", storage)),
              (std::vector<std::string>{"PATH=/ann/bin", "LR=0.1", "CUDA_DEVICE_ORDER=PCI_BUS_ID",
                                        "CUDA_VISIBLE_DEVICES=0", "GPUSCHED_JOB_ID=1",
                                        "GPUSCHED_GPU=0"}));
    EXPECT_EQ(strings(worker.for_submitted(submitted, false).for_job(1, "0", storage)),
              (std::vector<std::string>{"PATH=/ann/bin", "LR=0.1", "HOME=/home/worker",
                                        "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=0",
                                        "GPUSCHED_JOB_ID=1", "GPUSCHED_GPU=0"}));
}

} // namespace
} // namespace gpusched
