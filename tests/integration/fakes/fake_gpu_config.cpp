#include "fake_gpu_config.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace fake_gpu {

Config read_config()
{
    Config config;
    const char* path = std::getenv("GPUSCHED_FAKE_GPUS");
    std::ifstream file(path != nullptr ? path : "");
    std::string line;
    while (std::getline(file, line)) {
        std::istringstream words(line.substr(0, line.find('#')));
        std::string kind;
        words >> kind;
        if (kind == "driver_version") {
            words >> config.driver_version;
        } else if (kind == "gpu") {
            Gpu gpu;
            words >> gpu.uuid >> gpu.pci_bus_id >> gpu.total_mib >> gpu.used_mib >> std::ws;
            std::getline(words, gpu.name);
            config.gpus.push_back(std::move(gpu));
        } else if (kind == "process") {
            std::size_t position = 0;
            Process process;
            words >> position >> process.pid;
            const bool allocated = static_cast<bool>(words >> process.used_mib);
            if (position >= config.gpus.size()) {
                continue; // a test's mistake, which it then shows
            }
            if (allocated && kill(static_cast<pid_t>(process.pid), 0) != 0 && errno == ESRCH) {
                continue; // ended: its memory is freed
            }
            config.gpus[position].processes.push_back(process);
            config.gpus[position].used_mib += process.used_mib;
        } else if (kind == "busy") {
            std::size_t position = 0;
            int percent = -1;
            int celsius = -1;
            words >> position >> percent >> celsius;
            if (position < config.gpus.size()) {
                config.gpus[position].utilization_percent = percent;
                config.gpus[position].temperature_celsius = celsius;
            }
        } else if (kind == "mig_enabled" || kind == "mig") {
            std::size_t position = 0;
            words >> position;
            if (position >= config.gpus.size()) {
                continue; // a test's mistake, which it then shows
            }
            config.gpus[position].mig_enabled = true;
            if (kind == "mig") {
                Mig mig;
                words >> mig.uuid >> mig.gpu_instance >> mig.compute_instance >> mig.total_mib >>
                    mig.used_mib >> std::ws;
                std::getline(words, mig.name);
                config.gpus[position].migs.push_back(std::move(mig));
            }
        } else if (kind == "hang" || kind == "fail") {
            std::string function;
            words >> function;
            (kind == "hang" ? config.hung : config.failing).push_back(function);
        }
    }
    return config;
}

std::vector<Gpu> in_pci_order(const Config& config)
{
    auto gpus = config.gpus;
    std::stable_sort(gpus.begin(), gpus.end(),
                     [](const Gpu& a, const Gpu& b) { return a.pci_bus_id < b.pci_bus_id; });
    return gpus;
}

bool fails(const Config& config, const std::string& function)
{
    if (std::find(config.hung.begin(), config.hung.end(), function) != config.hung.end()) {
        // Noted first, so that a test can find the hanging process and watch it.
        if (const char* path = std::getenv("GPUSCHED_FAKE_HUNG_PIDS")) {
            std::ofstream(path, std::ios::app) << getpid() << std::endl;
        }
        while (true) {
            pause();
        }
    }
    return std::find(config.failing.begin(), config.failing.end(), function) !=
           config.failing.end();
}

void uuid_bytes(const std::string& uuid, char (&bytes)[16])
{
    std::string hex;
    for (const char c : uuid.substr(uuid.find('-') + 1)) {
        if (c != '-') {
            hex += c;
        }
    }
    hex.resize(32, '0');
    for (std::size_t i = 0; i < 16; ++i) {
        bytes[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
    }
}

} // namespace fake_gpu
