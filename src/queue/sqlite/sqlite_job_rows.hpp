#pragma once

// How the SQLite queue reads a job's row: the columns it selects and the record made of them,
// shared by the take, the verbs and the listings.
#include <gpusched/job_request.hpp>
#include <gpusched/memory_size.hpp>
#include <gpusched/queue/job_record.hpp>
#include <gpusched/queue/sqlite/sqlite_database.hpp>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::queue {

inline JobState state_of(const std::string& name)
{
    return job_state_named(name).value_or(JobState::failed);
}

// A job's own columns (what a worker's take returns: it reads its batch's origin once per
// batch), then, for listings, those of its batch: its directory, uid, user, name and request.
inline constexpr std::string_view k_taken_job_columns =
    "id, queue, command, batch, priority, state, coalesce(worker, ''), coalesce(gpu, ''), "
    "submitted, coalesce(started, 0), coalesce(runtime, 0), coalesce(exit_code, 0), "
    "coalesce(signal, 0), coalesce(note, ''), returned, cancel, coalesce(ended, 0), "
    "coalesce(output, ''), coalesce(peak_memory, 0), coalesce(memory_reruns, 0)";
inline const std::string k_job_columns =
    std::string(k_taken_job_columns) +
    ", (SELECT coalesce(directory, '') || char(0) || coalesce(uid, -1) || char(0) || "
    "coalesce(user, '') || char(0) || coalesce(name, '') || char(0) || coalesce(request, '') "
    "FROM batches WHERE batches.id = jobs.batch)";
inline constexpr int k_origin_column = 20;

// The batch's part of a job's columns: directory, uid, user, name and request, joined by NUL
// bytes (one look-up of the batch, not five).
inline void read_origin(const std::string& joined, JobRecord& job)
{
    std::vector<std::string_view> parts;
    std::string_view rest = joined;
    for (auto end = rest.find('\0'); end != std::string_view::npos; end = rest.find('\0')) {
        parts.push_back(rest.substr(0, end));
        rest.remove_prefix(end + 1);
    }
    parts.push_back(rest);
    if (parts.size() < 5) {
        return;
    }
    job.directory = std::string(parts[0]);
    job.submitter.uid = std::strtoll(std::string(parts[1]).c_str(), nullptr, 10);
    job.submitter.user = std::string(parts[2]);
    job.name = std::string(parts[3]);
    // A request this version cannot read says nothing of its memory here: the take refuses
    // the job (sqlite_queue_take.cpp).
    if (const auto request = decode_request(parts[4])) {
        job.memory_asked = request->memory;
    }
}

inline JobRecord read_job(const Statement& row)
{
    JobRecord job;
    job.id = row.integer(0);
    job.queue = row.text(1);
    job.command = row.text(2);
    job.batch = row.integer(3);
    job.priority = row.integer(4);
    job.state = state_of(row.text(5));
    job.worker = row.text(6);
    job.gpu = row.text(7);
    job.submitted = row.real(8);
    job.started = row.real(9);
    job.runtime = row.real(10);
    job.exit_code = static_cast<int>(row.integer(11));
    job.signal = static_cast<int>(row.integer(12));
    job.note = row.text(13);
    job.returned = row.integer(14);
    job.cancel_requested = row.integer(15) != 0;
    job.ended = row.real(16);
    job.output = row.text(17);
    // A value no worker writes (a hand-edited database) is no peak.
    const auto peak = row.integer(18);
    job.peak_memory = peak > 0 && static_cast<std::uint64_t>(peak) <= k_most_job_memory
                          ? static_cast<std::uint64_t>(peak)
                          : 0;
    job.memory_reruns = memory_reruns_of(std::to_string(row.integer(19)));
    if (row.columns() > k_origin_column) {
        read_origin(row.text(k_origin_column), job);
    }
    return job;
}

inline std::vector<JobRecord> read_jobs(Statement& query)
{
    std::vector<JobRecord> jobs;
    while (query.step()) {
        jobs.push_back(read_job(query));
    }
    query.reset();
    return jobs;
}

// Defines, on the database's connection, the function the take asks whether a worker could
// ever run a job (sqlite_queue_take.cpp).
void define_take_rule(Database& database);

} // namespace gpusched::queue
