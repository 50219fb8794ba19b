#include <gpusched/sys/lease_overview.hpp>

#include <gpusched/memory_size.hpp>
#include <gpusched/sys/lease_socket.hpp>
#include <gpusched/sys/lease_state.hpp>
#include <gpusched/sys/lock_directory.hpp>
#include <gpusched/sys/user_account.hpp>

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

namespace gpusched::sys {
namespace {

std::size_t count_shares(const std::string& space, const std::string& key,
                         const std::set<std::string>& held)
{
    if (!may_have_mig_instances(key)) {
        return 0;
    }
    const auto prefix = lease_shares_prefix(space, key);
    return static_cast<std::size_t>(std::count_if(held.begin(), held.end(), [&](const auto& name) {
        return name.starts_with(prefix) && is_lease_share(space, name) &&
               !is_lease_memory_share(space, name);
    }));
}

// Each process's memory shares of the GPU, by pid: its uid read from /proc while it runs
// (asking the share's socket would leave a connection in its queue until the job ends).
std::vector<MemorySharesView> memory_shares_of(const std::string& space, const std::string& key,
                                               const std::set<std::string>& held)
{
    const auto prefix = lease_memory_shares_prefix(space, key);
    std::map<long, MemorySharesView> by_pid;
    for (auto name = held.lower_bound(prefix); name != held.end() && name->starts_with(prefix);
         ++name) {
        const auto share = parse_lease_memory_share(prefix, *name);
        if (!share) {
            continue;
        }
        auto& view = by_pid[share->pid];
        view.pid = share->pid;
        ++view.jobs;
        view.reserved += std::min(share->mib, k_most_job_memory >> 20) << 20;
    }
    std::vector<MemorySharesView> shares;
    for (auto& [pid, view] : by_pid) {
        struct stat status {};
        if (stat(fmt::format("/proc/{}", pid).c_str(), &status) == 0) {
            view.uid = status.st_uid;
            view.user = user_name(status.st_uid);
        }
        shares.push_back(std::move(view));
    }
    return shares;
}

void add_unlisted(std::vector<ShownGpu>& shown, const std::string& key)
{
    const bool listed = std::any_of(shown.begin(), shown.end(),
                                    [&](const ShownGpu& gpu) { return gpu.key == key; });
    if (!listed) {
        shown.push_back({key, key});
    }
}

std::vector<LeaseWaitView> waits_of(const std::string& space, const std::set<std::string>& held)
{
    std::vector<LeaseWaitView> waits;
    for (const auto& name : held) {
        if (const auto wait = parse_lease_wait_name(space, name)) {
            waits.push_back({*wait, ask_lease_taker(name)});
        }
    }
    std::sort(waits.begin(), waits.end(), [](const LeaseWaitView& a, const LeaseWaitView& b) {
        return a.wait.since < b.wait.since;
    });
    return waits;
}

Json user_json(const std::string& user)
{
    return user.empty() ? Json(nullptr) : Json(user);
}

Json to_json(const MemorySharesView& shares)
{
    return {{"pid", shares.pid},
            {"uid", shares.uid ? Json(*shares.uid) : Json(nullptr)},
            {"user", user_json(shares.user)},
            {"jobs", shares.jobs},
            {"memory_reserved_mib", mebibytes_rounded_up(shares.reserved)}};
}

Json to_json(const GpuLeaseView& view)
{
    const auto reserved = reserved_memory(view);
    Json shares = Json::array();
    for (const auto& held : view.memory_shares) {
        shares.push_back(to_json(held));
    }
    Json entry = {
        {"id", view.gpu.id},
        {"key", view.gpu.key},
        {"state", view.leased                  ? "leased"
                  : view.memory_shares.empty() ? "free"
                                               : "shared"},
        {"mig_instances_leased", view.mig_shares},
        {"memory_shares", std::move(shares)},
        {"memory_reserved_mib", reserved ? Json(mebibytes_rounded_up(*reserved)) : Json(nullptr)},
        {"holder", nullptr},
        {"record", nullptr}};
    if (!view.leased) {
        return entry;
    }
    if (const auto& taker = view.owner.taker) {
        entry["holder"] = {
            {"pid", taker->pid}, {"uid", taker->uid}, {"user", user_json(taker->user)}};
    }
    auto& record = entry["record"] = {{"check", record_check_word(view.owner.check)},
                                      {"user", nullptr},
                                      {"uid", nullptr},
                                      {"gpusched_pid", nullptr},
                                      {"queued", nullptr},
                                      {"used_gpu_seconds", nullptr},
                                      {"share", nullptr},
                                      {"jobs", Json::array()}};
    if (const auto& written = view.owner.record) {
        record["user"] = user_json(written->user);
        record["uid"] = written->uid;
        record["gpusched_pid"] = written->gpusched_pid;
        if (written->queued) {
            record["queued"] = *written->queued;
        }
        record["used_gpu_seconds"] = json_seconds(written->used);
        record["share"] = written->share;
        for (const auto& job : written->jobs) {
            record["jobs"].push_back(
                {{"pid", job.pid},
                 {"command", job.command},
                 {"started", json_instant(job.since)},
                 {"memory_reserved_mib",
                  job.memory ? Json(mebibytes_rounded_up(*job.memory)) : Json(nullptr)}});
        }
    }
    return entry;
}

Json to_json(const LeaseWaitView& shown)
{
    return {{"pid", shown.wait.pid},
            {"user", shown.who ? user_json(shown.who->user) : Json(nullptr)},
            {"uid", shown.who ? Json(shown.who->uid) : Json(nullptr)},
            {"since", json_instant(static_cast<double>(shown.wait.since))},
            {"gpu_count", shown.wait.gpus}};
}

} // namespace

std::optional<std::uint64_t> reserved_memory(const GpuLeaseView& view)
{
    if (!view.leased && !view.memory_shares.empty()) {
        std::uint64_t sum = 0;
        for (const auto& shares : view.memory_shares) {
            sum += shares.reserved; // each at most k_most_job_memory: no wrap
            if (sum > k_most_job_memory) {
                return std::nullopt;
            }
        }
        return sum;
    }
    if (!view.leased || !view.owner.record) {
        return std::nullopt;
    }
    // Anyone may write a record: each job's memory is at most k_most_job_memory as read, and
    // a sum beyond it, which no GPU has, is no promise anyone made.
    std::optional<std::uint64_t> sum;
    for (const auto& job : view.owner.record->jobs) {
        if (job.memory) {
            sum = sum.value_or(0) + *job.memory;
            if (*sum > k_most_job_memory) {
                return std::nullopt;
            }
        }
    }
    return sum;
}

const char* record_check_word(RecordCheck check)
{
    switch (check) {
    case RecordCheck::none:
        return "missing";
    case RecordCheck::matches:
        return "matches";
    case RecordCheck::foreign:
        return "foreign";
    case RecordCheck::unverified:
        return "unverified";
    }
    return "unverified";
}

LeaseOverview read_lease_overview(const std::filesystem::path& lock_dir, std::vector<ShownGpu> gpus,
                                  bool add_others)
{
    const auto directory = LockDirectory::open_existing(lock_dir);
    const auto space = lease_space_of(lock_dir);
    const auto bound = bound_lease_names(space).value_or(std::vector<std::string>{});
    const std::set<std::string> held(bound.begin(), bound.end());
    if (add_others) {
        for (const auto& name : held) {
            if (const auto key = lease_key_of_socket_name(space, name)) {
                add_unlisted(gpus, *key);
            }
        }
        if (directory) {
            for (const auto& key : directory->keys()) {
                add_unlisted(gpus, key);
            }
        }
    }
    LeaseOverview overview;
    for (auto& gpu : gpus) {
        GpuLeaseView view;
        const auto name = lease_socket_name(space, gpu.key);
        view.leased = held.contains(name);
        view.mig_shares = count_shares(space, gpu.key, held);
        view.memory_shares = memory_shares_of(space, gpu.key, held);
        if (view.leased) {
            view.owner = read_lease_owner(name, -1, directory ? &*directory : nullptr, gpu.key);
        }
        view.gpu = std::move(gpu);
        overview.gpus.push_back(std::move(view));
    }
    overview.waits = waits_of(space, held);
    return overview;
}

void add_lease_overview_json(const LeaseOverview& overview, Json& document)
{
    auto& gpus = document["gpus"] = Json::array();
    for (const auto& gpu : overview.gpus) {
        gpus.push_back(to_json(gpu));
    }
    auto& waiters = document["waiters"] = Json::array();
    for (const auto& wait : overview.waits) {
        waiters.push_back(to_json(wait));
    }
}

} // namespace gpusched::sys
