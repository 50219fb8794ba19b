#include <gpusched/web/live_state.hpp>

#include <gpusched/queue/queue_json.hpp>
#include <gpusched/split.hpp>
#include <gpusched/wall_clock.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>

namespace gpusched::web {
namespace {

using namespace std::chrono_literals;

// How often the leases are read: a change reaches an open page within a second.
constexpr auto k_look_every = 500ms;
// How often the queue is read when nothing says it changed (a store that cannot tell, or a
// worker gone without a word).
constexpr auto k_queue_look_every = 5s;
constexpr std::uint64_t k_mib = 1024 * 1024;

Json optional_json(const std::optional<unsigned>& value)
{
    return value ? Json(*value) : Json(nullptr);
}

// What CUDA and NVML tell of a GPU, null where they do not.
Json device_json(const GpuInventory& inventory, const UsageReport& usage, const std::string& id)
{
    Json device = {{"index", nullptr},
                   {"uuid", nullptr},
                   {"name", nullptr},
                   {"memory_total_mib", nullptr},
                   {"memory_used_mib", nullptr},
                   {"utilization_percent", nullptr},
                   {"temperature_celsius", nullptr}};
    if (const auto* gpu = find_gpu(inventory, id)) {
        device["index"] = gpu->index;
        device["uuid"] = gpu->uuid;
        device["name"] = gpu->name;
        device["memory_total_mib"] = gpu->total_memory / k_mib;
    } else if (const auto* mig = id.starts_with("MIG-") ? find_mig(inventory, id) : nullptr) {
        device["uuid"] = mig->uuid;
        device["name"] = mig->name;
        device["memory_total_mib"] = mig->total_memory / k_mib;
    }
    if (const auto found = usage.gpus.find(id); found != usage.gpus.end()) {
        device["memory_used_mib"] = found->second.used_memory / k_mib;
        device["memory_total_mib"] = found->second.total_memory / k_mib;
        device["utilization_percent"] = optional_json(found->second.utilization_percent);
        device["temperature_celsius"] = optional_json(found->second.temperature_celsius);
    }
    return device;
}

// Each user's standing under the fair-share rule, from what holders write in their records:
// the GPU-seconds their runs' ended jobs used, over their --share; the lowest is owed a GPU
// first. Waiters that hold nothing have used nothing that can be seen.
Json fair_share_json(const sys::LeaseOverview& overview)
{
    struct Standing {
        std::set<long> runs;
        std::size_t held = 0;
        std::size_t waited_for = 0;
        double used = 0;
        double share = 0; // the sum of its runs' weights
    };
    std::map<std::string, Standing> users;
    for (const auto& gpu : overview.gpus) {
        if (!gpu.leased) {
            continue;
        }
        const auto& record = gpu.owner.record;
        const auto user = record            ? record->user
                          : gpu.owner.taker ? gpu.owner.taker->user
                                            : std::string("?");
        auto& standing = users[user];
        ++standing.held;
        if (record && standing.runs.insert(record->gpusched_pid).second) {
            standing.used += record->used;
            standing.share += record->share;
        }
    }
    for (const auto& wait : overview.waits) {
        auto& standing = users[wait.who ? wait.who->user : std::string("?")];
        standing.waited_for += wait.wait.gpus;
    }
    Json listed = Json::array();
    for (const auto& [user, standing] : users) {
        const double share = standing.share > 0 ? standing.share : 1;
        listed.push_back({{"user", user},
                          {"runs", standing.runs.size()},
                          {"gpus_held", standing.held},
                          {"gpus_waited_for", standing.waited_for},
                          {"used_gpu_seconds", json_seconds(standing.used)},
                          {"share", share},
                          {"standing", json_seconds(standing.used / share)}});
    }
    std::stable_sort(listed.begin(), listed.end(), [](const Json& a, const Json& b) {
        return a["standing"].get<double>() < b["standing"].get<double>();
    });
    return listed;
}

std::vector<HeldJob> held_jobs(const sys::LeaseOverview& overview)
{
    std::vector<HeldJob> jobs;
    for (const auto& gpu : overview.gpus) {
        if (!gpu.leased || !gpu.owner.record) {
            continue;
        }
        for (const auto& job : gpu.owner.record->jobs) {
            jobs.push_back({gpu.gpu.id, job.pid, job.since, gpu.owner.record->user, job.command});
        }
    }
    return jobs;
}

} // namespace

LiveState::LiveState(LiveSources sources) : m_sources(std::move(sources)) {}

LiveState::~LiveState()
{
    stop();
}

void LiveState::start()
{
    m_started = seconds_since_epoch();
    // What the status documents name is set before any thread reads it.
    if (has_queue()) {
        with_queue([&](queue::QueueBackend& queue) { m_queue_where = queue.describe(); });
    }
    look_at_leases();
    m_leases_thread = std::thread([this] { watch_leases(); });
    if (has_queue()) {
        look_at_queue();
        m_queue_thread = std::thread([this] { watch_queue(); });
    }
}

void LiveState::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_changed.notify_all();
    for (auto* thread : {&m_leases_thread, &m_queue_thread}) {
        if (thread->joinable()) {
            thread->join();
        }
    }
}

LiveState::Snapshot LiveState::current() const
{
    std::lock_guard lock(m_mutex);
    return m_snapshot;
}

LiveState::Snapshot LiveState::wait_newer(std::uint64_t seen, std::chrono::milliseconds most) const
{
    std::unique_lock lock(m_mutex);
    m_changed.wait_for(lock, most, [&] { return m_stopping || m_snapshot.version != seen; });
    return m_snapshot;
}

void LiveState::note_usage(const UsageReport& report)
{
    const auto now = seconds_since_epoch();
    std::lock_guard lock(m_mutex);
    m_usage = report;
    for (const auto& [gpu, usage] : report.gpus) {
        if (usage.utilization_percent) {
            m_history.observe_utilization(now, gpu, *usage.utilization_percent);
        }
    }
}

void LiveState::watch_leases()
{
    while (true) {
        {
            std::unique_lock lock(m_mutex);
            if (m_changed.wait_for(lock, k_look_every, [&] { return m_stopping.load(); })) {
                return;
            }
        }
        look_at_leases();
    }
}

void LiveState::watch_queue()
{
    // A connection of its own, for the store's change watch only: requests go on meanwhile.
    std::unique_ptr<queue::QueueBackend> changes;
    try {
        changes = m_sources.open_queue(queue::WhenMissing::gone);
    } catch (const std::exception& error) {
        spdlog::warn("the queue is looked at every {} s: {}", k_queue_look_every.count(),
                     error.what());
    }
    auto looked = Clock::now();
    while (!m_stopping) {
        bool changed = true;
        if (changes) {
            changed = changes->wait_for_change(k_look_every);
        } else {
            std::this_thread::sleep_for(k_look_every);
        }
        if (m_stopping) {
            return;
        }
        if (changed || Clock::now() - looked >= k_queue_look_every) {
            looked = Clock::now();
            look_at_queue();
        }
    }
}

void LiveState::look_at_leases()
{
    sys::LeaseOverview overview;
    try {
        overview =
            sys::read_lease_overview(m_sources.lock_dir, m_sources.gpus, m_sources.add_others);
    } catch (const std::exception& error) {
        // Short of descriptors, say: the page keeps the last look, and the next one tries
        // again.
        if (error.what() != std::exchange(m_lease_problem, error.what())) {
            spdlog::warn("the leases could not be read: {}", error.what());
        }
        return;
    }
    m_lease_problem.clear();
    const auto now = seconds_since_epoch();
    std::string status;
    {
        std::lock_guard lock(m_mutex);
        m_history.observe(now, held_jobs(overview));
        status = status_document(overview);
    }
    publish(&Snapshot::status, std::move(status));
}

void LiveState::look_at_queue()
{
    publish(&Snapshot::queue, queue_document());
}

void LiveState::publish(std::string Snapshot::*part, std::string document)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_snapshot.*part == document) {
            return;
        }
        m_snapshot.*part = std::move(document);
        ++m_snapshot.version;
    }
    m_changed.notify_all();
}

std::string LiveState::status_document(const sys::LeaseOverview& overview) const
{
    auto document = json_document("serve");
    document["server"] = {
        {"host", m_sources.host},
        {"user", m_sources.user},
        {"uid", m_sources.uid},
        {"started", json_instant(m_started)},
        {"queue", has_queue() ? Json(m_sources.queue_name) : Json(nullptr)},
        {"where", has_queue() ? Json(m_queue_where) : Json(nullptr)},
        {"allow_actions", m_sources.allow_actions},
        {"gpus_found_by",
         m_sources.inventory.source.empty() ? Json(nullptr) : Json(m_sources.inventory.source)},
        {"usage_problem", m_usage.problem.empty() ? Json(nullptr) : Json(m_usage.problem)}};
    sys::add_lease_overview_json(overview, document);
    for (auto& gpu : document["gpus"]) {
        gpu["device"] = device_json(m_sources.inventory, m_usage, gpu["id"].get<std::string>());
    }
    document["fair_share"] = fair_share_json(overview);
    return format_json(document);
}

std::string LiveState::queue_document()
{
    auto document = json_document("serve");
    const auto look = [&] {
        with_queue([&](queue::QueueBackend& backend) {
            const auto listing = backend.list({.queued = k_queue_page, .recent = k_queue_page});
            queue::add_listing_json(listing, m_sources.queue_name, backend.describe(), 0, document);
        });
    };
    try {
        try {
            look();
        } catch (const queue::QueueGone&) {
            look(); // at the database made anew under the name, if there is one
        }
        document["error"] = nullptr;
    } catch (const queue::QueueGone& error) {
        // Nothing of the last look holds: the page shows no job of it.
        document["error"] = error.what();
        document["gone"] = true;
    } catch (const std::exception& error) {
        // The store is away (Redis stopped, the database locked): said on the page, and the
        // next look tries again.
        document["error"] = error.what();
    }
    return format_json(document);
}

std::string LiveState::timeline_document(unsigned hours, const TimeSource& time)
{
    std::lock_guard lock(m_timeline_mutex);
    auto& made = m_timelines[hours];
    if (made.document.empty() || time.now() - made.made >= 1s ||
        made.queue_generation != m_queue_generation) {
        // Read first: a store found gone while the timeline is made makes it again next time.
        made.queue_generation = m_queue_generation;
        const auto now = seconds_since_epoch(time.wall_now());
        made.document = format_json(timeline(now - hours * 3600.0, now));
        made.made = time.now();
    }
    return made.document;
}

Json LiveState::timeline(double from, double now)
{
    std::map<std::string, Json> gpus; // by id, in the order of the status
    Json order = Json::array();
    const auto gpu_entry = [&](const std::string& id) -> Json& {
        auto [found, added] = gpus.try_emplace(id);
        if (added) {
            found->second = {{"id", id}, {"spans", Json::array()}, {"utilization", Json::array()}};
            order.push_back(id);
        }
        return found->second;
    };
    for (const auto& gpu : m_sources.gpus) {
        gpu_entry(gpu.id);
    }
    // The queue's jobs first: where a job also ran under a lease, the queue's span, which
    // names the job, stands for both.
    std::vector<queue::JobRecord> queue_jobs;
    if (has_queue()) {
        try {
            with_queue([&](queue::QueueBackend& backend) {
                auto listing = backend.list({.recent = 500});
                queue_jobs = std::move(listing.running);
                queue_jobs.insert(queue_jobs.end(), listing.recent.begin(), listing.recent.end());
            });
        } catch (const std::exception&) {
            // The timeline shows what the leases show.
        }
    }
    std::set<std::pair<std::string, long long>> covered; // gpu, start in ms
    for (const auto& job : queue_jobs) {
        const double end = job.ended_state() ? job.ended : 0;
        if (job.started == 0 || (end != 0 && end < from)) {
            continue;
        }
        for (const auto gpu : split(job.gpu, ',')) {
            if (gpu.empty()) {
                continue;
            }
            gpu_entry(std::string(gpu))["spans"].push_back(
                {{"start", json_instant(job.started)},
                 {"end", end != 0 ? json_instant(end) : Json(nullptr)},
                 {"user", job.submitter.user.empty() ? Json(nullptr) : Json(job.submitter.user)},
                 {"pid", nullptr},
                 {"command", job.command},
                 {"job_id", job.id},
                 {"state", std::string(queue::to_string(job.state))},
                 {"exit_code",
                  job.ended_state() && job.started != 0 ? Json(job.exit_code) : Json(nullptr)}});
            covered.insert({std::string(gpu), static_cast<long long>(job.started)});
        }
    }
    std::lock_guard lock(m_mutex);
    for (const auto& span : m_history.spans(from)) {
        const auto start = static_cast<long long>(span.job.since);
        if (covered.contains({span.job.gpu, start}) ||
            covered.contains({span.job.gpu, start - 1}) ||
            covered.contains({span.job.gpu, start + 1})) {
            continue;
        }
        gpu_entry(span.job.gpu)["spans"].push_back(
            {{"start", json_instant(span.job.since)},
             {"end", span.end != 0 ? json_instant(span.end) : Json(nullptr)},
             {"user", span.job.user},
             {"pid", span.job.pid},
             {"command", span.job.command},
             {"job_id", nullptr},
             {"state", span.end != 0 ? "ended" : "running"},
             {"exit_code", nullptr}});
    }
    for (const auto& id : order) {
        auto& entry = gpus.at(id.get<std::string>());
        for (const auto& sample : m_history.utilization(id.get<std::string>(), from)) {
            entry["utilization"].push_back(
                {{"at", json_instant(sample.at)}, {"percent", sample.percent}});
        }
    }
    auto document = json_document("serve");
    document["from"] = json_instant(from);
    document["to"] = json_instant(now);
    document["seen_since"] = json_instant(m_started);
    auto& listed = document["gpus"] = Json::array();
    for (const auto& id : order) {
        listed.push_back(std::move(gpus.at(id.get<std::string>())));
    }
    return document;
}

} // namespace gpusched::web
