#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// The signature of a queued job: HMAC-SHA256, keyed with the shared secret, over the queue's
// name, the job's id and its command ("QUEUE\nID\nCOMMAND"), in hex. The queue and the id are
// signed too, so a signed command can neither be queued again under another id nor copied
// into another queue to run twice.
std::string sign_job(std::string_view key, std::string_view queue, std::string_view id,
                     std::string_view command);

// Compares in constant time, so the time taken says nothing of where a forgery went wrong.
bool signature_matches(std::string_view key, std::string_view queue, std::string_view id,
                       std::string_view command, std::string_view signature);

} // namespace gpusched
