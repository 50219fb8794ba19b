#pragma once

#include <gpusched/gpu_discovery.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

// The longest abstract Unix socket name: sun_path less the NUL byte that makes it abstract.
inline constexpr std::size_t k_longest_socket_name = 107;

// The lease space of a lock directory: "gpusched-lease/<16 hex digits>/", the digits a hash of
// the directory's path. Runs that name the same directory share the space, so they exclude
// each other; runs with another --lock-dir (a test's) never meet them. The path is a name
// only: the directory need not exist, and removing or replacing it changes nothing.
std::string lease_space(std::string_view lock_directory);

// The space of the workers of a local queue database: "gpusched-worker/<16 hex digits>/", the
// digits a hash of what identifies the database file (its device and inode), so that every
// path to one file meets the same workers. Names in it are made by lease_socket_name.
std::string worker_space(std::string_view database);

// The abstract socket name (without its leading NUL byte) that is the lease of `key` in
// `space`: the space, then the key encoded as in file names. A key too long for that ends in
// a hash of itself instead, which never reads back.
std::string lease_socket_name(std::string_view space, std::string_view key);
// The key of a socket name in `space`, or nothing for a name lease_socket_name cannot write.
std::optional<std::string> lease_key_of_socket_name(std::string_view space, std::string_view name);

// A process waiting for leases of `space` binds a name that says so, for `gpusched status`:
// "<space>wait/<pid>/<since>/<gpus>", since in whole seconds since the epoch, gpus how many
// it waits for. Like a lease, the name goes with the process: a waiter that dies leaves
// nothing behind. ('/' never appears in an encoded key: no GPU's lease looks like one.)
struct LeaseWaitName {
    long pid = 0;
    long long since = 0;
    std::size_t gpus = 0;
};
std::string lease_wait_name(std::string_view space, const LeaseWaitName& wait);
std::string lease_wait_prefix(std::string_view space);
std::optional<LeaseWaitName> parse_lease_wait_name(std::string_view space, std::string_view name);

// The name of a GPU's record file in the lock directory (who holds it, for `gpusched status`).
// The key is never used raw: every byte but [A-Za-z0-9-] is percent-encoded, so no id ("../x",
// "a/b", ".") can name a file outside the directory or another GPU's file, and the name reads
// back to the key.
std::string lease_record_file_name(std::string_view key);
// The key of a record file's name, or nothing for a name lease_record_file_name cannot produce.
std::optional<std::string> lease_key_of_record_file(std::string_view file_name);

// A MIG instance's lease excludes a lease on its whole GPU, but not on the GPU's other
// instances. Besides its own lease, the holder of a MIG instance binds a "share" of its GPU: a
// name under the GPU's key, made of the GPU's key, a '/' (which encoding never writes, so it
// never reads back as a key) and a hash of the instance's key. A whole GPU's lease, once bound,
// looks for shares under its key (lease_shares_prefix) and is let go again while any is bound;
// a MIG instance's, once bound with its share, is let go again while its GPU's lease is bound.
// Each side looks only after it has bound its own names, so of two that race at least one
// sees the other.
std::string lease_share_name(std::string_view space, std::string_view parent_key,
                             std::string_view key);
// The start of the names of the shares of the GPU `key`: bound names that start so and are
// shares (is_lease_share) are its MIG instances' leases. Where the key is the start of the
// GPU's UUID (CUDA takes GPU-8e6b), it is the start of its shares' names all the same.
std::string lease_shares_prefix(std::string_view space, std::string_view key);
bool is_lease_share(std::string_view space, std::string_view name);
// A job that asks for memory on a GPU shares it with other processes' such jobs instead of
// taking its whole lease: its process binds a "memory share" of the GPU for the job, a name
// under the GPU's key that says who promised how much: "<space><key>/m<pid>.<job>.<MiB>". The
// job inherits it, so the promise lasts while the job (or anything it started) runs, however
// its gpusched ends, and another process reads every promise from the bound names alone. A
// share is a share like a MIG instance's (is_lease_share): a whole GPU's lease is let go again
// while one is bound, and a share is let go again while its GPU's lease is bound. Nothing
// when the name would be too long for a socket: the job then takes the whole lease.
struct MemoryShareName {
    long pid = 0;
    std::uint64_t job = 0;
    std::uint64_t mib = 0;
};
std::optional<std::string> lease_memory_share_name(std::string_view space, std::string_view key,
                                                   const MemoryShareName& share);
std::string lease_memory_shares_prefix(std::string_view space, std::string_view key);
// The share a bound name under lease_memory_shares_prefix stands for; nothing for another name.
std::optional<MemoryShareName> parse_lease_memory_share(std::string_view prefix,
                                                        std::string_view name);
// Bound by a process that waits for the GPU `key` whole while memory shares of it are bound:
// no new share is admitted while it is, so that jobs that ask for memory, one after another,
// never keep the GPU from a job that needs it whole. Not a share: a whole lease is not let go
// for it. Nothing where the name would be too long (no memory share fits there either).
std::optional<std::string> lease_whole_wait_name(std::string_view space, std::string_view key);
// True for a share that is a memory share, not a MIG instance's, whatever key it is under.
bool is_lease_memory_share(std::string_view space, std::string_view name);
// Bound for a moment by a process admitting a memory share of the GPU `key`: it reads the
// promises and binds its own under it, so two never admit on the same free memory.
std::string lease_admission_name(std::string_view space, std::string_view key);
// True for a key that can have MIG instances: a GPU's UUID, or the start of one.
bool may_have_mig_instances(std::string_view key);

// What each GPU is leased under: its UUID when the id is an index the probe found, so that
// `--gpus 0` and a discovered GPU 0 take the same lease; for a MIG instance the probe found,
// its whole UUID, so that its abbreviations and its MIG-GPU-<uuid>/<gi>/<ci> form take the
// same lease too; else the id as given (UUIDs, and indices on a machine where CUDA lists
// nothing).
std::vector<std::string> lease_keys(const std::vector<std::string>& ids,
                                    const GpuInventory& inventory);

// The key of the GPU each MIG instance among `keys` is a part of ("" for whole GPUs, and
// for a MIG instance whose GPU is unknown): from the probe, or from a MIG-GPU-<uuid>/<gi>/<ci>
// id itself.
std::vector<std::string> lease_parents(const std::vector<std::string>& keys,
                                       const GpuInventory& inventory);

// What is wrong with leasing `ids` under `keys` (lease_keys of them): an id that is the start
// of several GPUs' UUIDs (it names none for sure), or two ids that are one GPU (its index and
// its UUID: the run would wait for its own lease). Nothing when they can be leased.
std::optional<std::string> lease_keys_problem(const std::vector<std::string>& ids,
                                              const std::vector<std::string>& keys,
                                              const GpuInventory& inventory);
// True when some id is a plain index, which only the probe can turn into a UUID.
bool has_gpu_indices(const std::vector<std::string>& ids);
// True when some id is the start of a GPU UUID (GPU-8e6b), which only the probe can complete.
bool has_partial_uuids(const std::vector<std::string>& ids);
// True when some id is a MIG instance, whose GPU only the probe can tell.
bool has_mig_ids(const std::vector<std::string>& ids);

} // namespace gpusched
