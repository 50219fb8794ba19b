#pragma once

#include <CLI/App.hpp>
#include <CLI/Formatter.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gpusched::cli {

// The groups --help sorts a run's options into (CLI11's group()), in this order; --help and
// --version come last.
inline constexpr const char* k_input_group = "Input";
inline constexpr const char* k_gpus_group = "GPUs";
inline constexpr const char* k_jobs_group = "Jobs";
inline constexpr const char* k_records_group = "Records";
inline constexpr const char* k_leases_group = "Leases";
inline constexpr const char* k_log_group = "Log";
inline constexpr const char* k_queue_group = "Queue";
inline constexpr const char* k_other_group = "Other";

// CLI11's help with each description wrapped to fit an 80-column terminal.
std::shared_ptr<CLI::Formatter> wrapping_formatter();

// The option groups of `command` in the order --help shows them: a run's groups in the order
// above, others (a subcommand's) where they first appear, and the group of --help last.
std::vector<std::string> option_groups(const CLI::App& command);

} // namespace gpusched::cli
