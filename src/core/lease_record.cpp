#include <gpusched/lease_record.hpp>

#include <gpusched/memory_size.hpp>

#include <gpusched/failed_jobs.hpp>
#include <gpusched/job_messages.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ctime>

namespace gpusched {
namespace {

// The command named in a waiter's line: enough to know it by, short enough for a status line.
constexpr std::size_t k_waiter_command = 40;

} // namespace

bool held_by_exec(const LeaseRecord& record)
{
    return record.jobs.size() == 1 && record.jobs.front().pid == record.gpusched_pid;
}

std::string format_lease_record(const LeaseRecord& record)
{
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (const auto& job : record.jobs) {
        jobs.push_back(
            {{"pid", job.pid}, {"since", job.since}, {"command", shorten_command(job.command)}});
        if (job.memory) {
            jobs.back()["memory"] = *job.memory;
        }
    }
    nlohmann::ordered_json json = {{"user", record.user},
                                         {"uid", record.uid},
                                         {"gpusched_pid", record.gpusched_pid},
                                         {"jobs", std::move(jobs)}};
    if (record.since > 0) {
        json["since"] = record.since;
    }
    if (record.queued) {
        json["queued"] = *record.queued;
    }
    json["used"] = record.used;
    json["share"] = record.share;
    return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::optional<LeaseRecord> parse_lease_record(std::string_view text)
{
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) {
        return std::nullopt;
    }
    try {
        LeaseRecord record;
        record.user = json.at("user").get<std::string>();
        record.uid = json.at("uid").get<unsigned>();
        record.gpusched_pid = json.at("gpusched_pid").get<long>();
        for (const auto& job : json.at("jobs")) {
            record.jobs.push_back(LeaseHolder{job.at("pid").get<long>(),
                                              job.at("since").get<double>(),
                                              job.at("command").get<std::string>()});
            // A size that is no size (negative, past any GPU) is left out rather than shown.
            if (job.contains("memory") && job.at("memory").is_number_unsigned() &&
                job.at("memory").get<std::uint64_t>() <= k_most_job_memory) {
                record.jobs.back().memory = job.at("memory").get<std::uint64_t>();
            }
        }
        record.since = json.value("since", 0.0);
        // Anyone may write a record: a count that is no count (-5, which would read as
        // 2^64 - 5) is left out rather than shown.
        if (json.contains("queued") && json.at("queued").is_number_unsigned()) {
            record.queued = json.at("queued").get<std::size_t>();
        }
        if (json.contains("used") && json.at("used").is_number() && json.at("used") >= 0) {
            record.used = json.at("used").get<double>();
        }
        if (json.contains("share") && json.at("share").is_number() && json.at("share") > 0) {
            record.share = json.at("share").get<double>();
        }
        return record;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt; // well-formed JSON of another shape
    }
}

std::string describe_lease_holder(const std::optional<LeaseRecord>& record)
{
    if (!record) {
        return "another process";
    }
    if (record->jobs.size() == 1) {
        const auto& job = record->jobs.front();
        return fmt::format("{} (pid {}: {})", record->user, job.pid, job.command);
    }
    return fmt::format("{} (gpusched pid {}, {} jobs)", record->user, record->gpusched_pid,
                       record->jobs.size());
}

LeaseOwner identify_lease_owner(std::optional<LeaseTaker> taker, std::optional<LeaseRecord> record)
{
    LeaseOwner owner{std::move(taker), std::nullopt, RecordCheck::none};
    if (!record) {
        return owner;
    }
    if (!owner.taker) {
        owner.check = RecordCheck::unverified;
    } else if (record->gpusched_pid == owner.taker->pid && record->uid == owner.taker->uid) {
        owner.check = RecordCheck::matches;
    } else {
        owner.check = RecordCheck::foreign;
        return owner;
    }
    owner.record = std::move(record);
    return owner;
}

std::string describe_lease_wait(const LeaseOwner& owner)
{
    if (owner.record) {
        const auto& record = *owner.record;
        std::string since;
        if (record.since > 0) {
            const auto when = static_cast<std::time_t>(record.since);
            std::tm local{};
            localtime_r(&when, &local);
            since = fmt::format(" since {:02}:{:02}", local.tm_hour, local.tm_min);
        }
        if (held_by_exec(record)) {
            return fmt::format("{}'s exec {} ({}){}", record.user, record.gpusched_pid,
                               one_line_command(record.jobs.front().command, k_waiter_command),
                               since);
        }
        return fmt::format("{}'s run {}{}", record.user, record.gpusched_pid, since);
    }
    if (owner.taker) {
        return fmt::format("{}'s process {}", owner.taker->user, owner.taker->pid);
    }
    return "another process";
}

std::string describe_lease_holder(const LeaseOwner& owner)
{
    if (owner.record || !owner.taker) {
        return describe_lease_holder(owner.record);
    }
    return fmt::format("{} (pid {})", owner.taker->user, owner.taker->pid);
}

} // namespace gpusched
