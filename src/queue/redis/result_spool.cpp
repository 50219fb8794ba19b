#include <gpusched/queue/redis/result_spool.hpp>

#include <gpusched/sys/state_directory.hpp>
#include <gpusched/sys/system_error.hpp>
#include <gpusched/sys/write_all.hpp>

#include <gpusched/counted.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <sstream>
#include <set>
#include <system_error>

namespace gpusched::queue {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// Ids are written as strings and outcomes as words, as Redis keeps them: a spool left by an
// earlier version is read the same.
Json to_json(const Owed& owed)
{
    Json line = {{"n", owed.number}, {"worker", owed.worker}};
    if (const auto* owed_result = std::get_if<OwedResult>(&owed.what)) {
        const auto& result = owed_result->result;
        line["result"] = {{"id", std::to_string(result.id)},
                          {"batch", owed_result->batch},
                          {"outcome", to_string(result.state)},
                          {"exit", result.exit_code},
                          {"signal", result.signal},
                          {"host", owed_result->host},
                          {"gpu", result.gpu},
                          {"started", result.started},
                          {"runtime", result.runtime},
                          {"note", result.note},
                          {"marker", owed_result->marker},
                          {"out_tail", result.out_tail},
                          {"err_tail", result.err_tail},
                          {"complete", result.complete},
                          {"peak_memory", result.peak_memory},
                          {"memory_reruns", result.memory_reruns}};
    } else {
        const auto& give_back = std::get<GiveBack>(owed.what);
        line["give_back"] = std::to_string(give_back.id);
        line["marker"] = give_back.marker;
    }
    return line;
}

std::int64_t id_of(const Json& id)
{
    return id.is_string() ? std::stoll(id.get<std::string>()) : id.get<std::int64_t>();
}

std::optional<Owed> from_json(const Json& line)
{
    Owed owed;
    owed.worker = line.at("worker").get<std::string>();
    if (line.contains("give_back")) {
        owed.what = GiveBack{id_of(line.at("give_back")), line.at("marker").get<std::string>()};
        return owed;
    }
    const auto& result = line.at("result");
    const auto state = job_state_named(result.at("outcome").get<std::string>());
    if (!state) {
        return std::nullopt;
    }
    owed.what = OwedResult{
        JobResult{id_of(result.at("id")), *state, result.at("exit").get<int>(),
                  result.at("signal").get<int>(), result.at("gpu").get<std::string>(),
                  result.at("started").get<double>(), result.at("runtime").get<double>(),
                  result.at("note").get<std::string>(), result.value("out_tail", std::string()),
                  result.value("err_tail", std::string()), result.value("complete", true),
                  // A line spooled before peaks or re-runs were kept has none.
                  result.value("peak_memory", std::uint64_t{0}), result.value("memory_reruns", 0u)},
        result.at("host").get<std::string>(), result.at("batch").get<std::string>(),
        result.at("marker").get<std::string>()};
    return owed;
}

std::string read_whole(int fd)
{
    std::string text;
    char buffer[65536];
    ssize_t got = 0;
    while ((got = ::read(fd, buffer, sizeof buffer)) > 0 || (got < 0 && errno == EINTR)) {
        text.append(buffer, static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
    }
    return text;
}

// The entries of a spool file not marked sent. A line cut short by a crash is skipped.
std::vector<Owed> unsent_in(int fd, const fs::path& path)
{
    std::istringstream file(read_whole(fd));
    std::vector<std::pair<std::uint64_t, Owed>> entries;
    std::set<std::uint64_t> sent;
    std::string text;
    while (std::getline(file, text)) {
        try {
            const auto line = Json::parse(text);
            if (line.contains("sent")) {
                sent.insert(line.at("sent").get<std::uint64_t>());
            } else if (auto owed = from_json(line)) {
                entries.emplace_back(line.at("n").get<std::uint64_t>(), std::move(*owed));
            }
        } catch (const std::exception&) { // Json's errors, and an id that is not a number
            spdlog::warn("{}: skipping a damaged line", path.string());
        }
    }
    std::vector<Owed> unsent;
    for (auto& [number, owed] : entries) {
        if (!sent.contains(number)) {
            unsent.push_back(std::move(owed));
        }
    }
    return unsent;
}

} // namespace

std::int64_t Owed::job_id() const
{
    const auto* result = std::get_if<OwedResult>(&what);
    return result != nullptr ? result->result.id : std::get<GiveBack>(what).id;
}

fs::path ResultSpool::default_directory()
{
    if (const auto state = sys::state_directory()) {
        return *state / "spool";
    }
    return fs::path("/tmp") / fmt::format("gpusched-spool-{}", getuid());
}

ResultSpool::ResultSpool(const fs::path& directory, const std::string& queue_key,
                         const std::string& worker)
    : m_directory(directory / queue_key), m_path(m_directory / (worker + ".spool"))
{
    std::error_code error;
    fs::create_directories(m_directory, error);
    if (error) {
        throw std::runtime_error(
            fmt::format("spool directory {}: {}", m_directory.string(), error.message()));
    }
    // Through a descriptor of the directory itself: a symbolic link is not followed.
    const sys::UniqueFd folder(
        ::open(m_directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!folder || ::fchmod(folder.get(), 0700) != 0) {
        sys::throw_errno("spool directory " + m_directory.string());
    }
    const auto making = m_path.string() + ".new";
    m_file.reset(::open(making.c_str(),
                        O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!m_file) {
        sys::throw_errno("open " + making);
    }
    if (::flock(m_file.get(), LOCK_EX | LOCK_NB) != 0 || ::rename(making.c_str(), m_path.c_str()) != 0) {
        const auto why = std::string(std::strerror(errno));
        ::unlink(making.c_str());
        throw std::runtime_error(fmt::format("spool file {}: {}", m_path.string(), why));
    }
}

bool ResultSpool::append(const std::string& line)
{
    struct stat before {};
    const bool sized = ::fstat(m_file.get(), &before) == 0;
    if (sys::write_all(m_file.get(), line)) {
        return true;
    }
    const int error = errno;
    if (sized) {
        (void)!::ftruncate(m_file.get(), before.st_size); // no half line before the next
    }
    if (!std::exchange(m_failed, true)) {
        spdlog::error("cannot write the spool file {}: {}; results are sent, but one the queue "
                      "has not acknowledged is lost if this worker ends first",
                      m_path.string(), std::strerror(error));
    }
    return false;
}

bool ResultSpool::add(Owed& owed)
{
    owed.number = m_next++;
    ++m_owed;
    owed.spooled =
        append(to_json(owed).dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
    if (owed.spooled && std::exchange(m_failed, false)) {
        spdlog::info("the spool file {} takes results again", m_path.string());
    }
    return owed.spooled;
}

void ResultSpool::mark_sent(std::uint64_t number)
{
    if (m_owed > 0) {
        --m_owed;
    }
    if (m_owed == 0) {
        // Nothing is owed: the file starts again empty (appends go to the new end).
        if (::ftruncate(m_file.get(), 0) == 0) {
            return;
        }
    }
    append(fmt::format("{{\"sent\":{}}}\n", number));
}

void ResultSpool::close_if_settled()
{
    if (m_owed == 0 && m_file) {
        ::unlink(m_path.c_str());
        m_file.reset();
    }
}

std::vector<Owed> ResultSpool::adopt_orphans()
{
    std::vector<Owed> adopted;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(m_directory, error)) {
        const auto& path = entry.path();
        if (path == m_path || path.extension() != ".spool") {
            continue;
        }
        // Not blocking: a FIFO planted here must not hang the worker (it is skipped below).
        const sys::UniqueFd other(
            ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat info {};
        // A file its worker still holds is that worker's to send.
        if (!other || ::fstat(other.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
            ::flock(other.get(), LOCK_EX | LOCK_NB) != 0) {
            continue;
        }
        for (auto& owed : unsent_in(other.get(), path)) {
            add(owed);
            adopted.push_back(std::move(owed));
        }
        ::unlink(path.c_str());
    }
    if (!adopted.empty()) {
        spdlog::info("sending {} that stopped workers could not send",
                     counted(adopted.size(), "result or return", "results and returns"));
    }
    return adopted;
}

} // namespace gpusched::queue
