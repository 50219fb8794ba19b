#pragma once

#include <gpusched/job.hpp>
#include <gpusched/process_table.hpp>
#include <gpusched/result.hpp>

#include <string>

namespace gpusched {

// A job the runner has placed and prepared, to be launched.
struct LaunchRequest {
    JobId id = 0;
    const std::string& gpus; // its GPUs' ids, as CUDA_VISIBLE_DEVICES takes them
    // Its shell's command, environment, output, lease descriptors, directory and umask.
    const SpawnRequest& spawn;
};

// How the runner starts a job: the one step between "these GPUs are the job's" and "this
// process group is the job". The runner's rules (stops, --timeout, leftovers, retries) need
// only what comes back: a local process that leads a group of its own and holds a presence
// token, which the process table then reaps, signals and watches like any other. So a second
// way to run a job (a Slurm task, whose local process is the `srun` that stands for it) is a
// second launcher, chosen where the run is put together, and the runner is not edited.
class JobLauncher {
public:
    virtual ~JobLauncher() = default;
    // The started job, or what kept it from starting, with its errno.
    virtual Result<Spawned> launch(const LaunchRequest& request) = 0;
};

// A job as a shell on this machine: what the process table spawns.
class LocalLauncher final : public JobLauncher {
public:
    explicit LocalLauncher(ProcessTable& processes) : m_processes(processes) {}
    Result<Spawned> launch(const LaunchRequest& request) override
    {
        return m_processes.spawn(request.spawn);
    }

private:
    ProcessTable& m_processes;
};

} // namespace gpusched
