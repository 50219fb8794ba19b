#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// What a queued job's signature covers: everything that says what runs, where and as whom.
// The queue and the id are signed so that a signed command can neither be queued again under
// another id nor copied into another queue to run twice; the attempt, so that a finished job
// cannot be made new again by bumping it (only `gpusched retry` with the key signs the next
// attempt); the context's digest, so that its directory and environment cannot be changed.
struct SignedJob {
    std::string_view queue;
    std::string_view id;
    std::string_view attempt; // "0" for the first run, as the job's `attempt` field counts
    std::string_view command;
    std::string_view context; // the digest of its context (context_digest), "" if none
    std::string_view user;
    std::string_view host; // submitted from
};

// HMAC-SHA256, keyed with the shared secret, over the fields of `job` one per line, in hex.
std::string sign_job(std::string_view key, const SignedJob& job);

// Compares in constant time, so the time taken says nothing of where a forgery went wrong.
bool signature_matches(std::string_view key, const SignedJob& job, std::string_view signature);

// SHA-256 of an encoded job context (encode_context), in hex: the key it is kept under, and
// what the signature covers of it.
std::string context_digest(std::string_view encoded);

} // namespace gpusched
