#pragma once

// The machine the fake driver libraries describe, read from the file that $GPUSCHED_FAKE_GPUS
// names, one setting per line ('#' starts a comment):
//
//   driver_version 12020                 what cuDriverGetVersion answers (default 13000)
//   gpu UUID PCI_BUS_ID TOTAL_MIB USED_MIB NAME...
//                                        one GPU; the lines' order is the driver's own
//                                        enumeration order, the PCI bus ids give nvidia-smi's
//   process GPU PID                      a compute process on the GPU'th gpu line (from 0)
//   process GPU PID MIB                  one that allocated MIB of the GPU's memory: counted in
//                                        the GPU's used memory, and listed only while PID
//                                        lives (the driver frees what a process leaves)
//   busy GPU PERCENT CELSIUS             the GPU'th gpu line's utilisation and temperature
//                                        (without it, NVML answers "not supported")
//   mig_enabled GPU                      the GPU'th gpu line's MIG mode is enabled
//   mig GPU UUID GI CI TOTAL_MIB USED_MIB NAME...
//                                        a MIG instance (MIG-<uuid>, GPU and compute instance
//                                        ids) of the GPU'th gpu line, whose MIG mode it enables
//   hang FUNCTION                        FUNCTION (e.g. cuInit, nvmlInit_v2) never returns; the
//                                        pid that hangs is appended to $GPUSCHED_FAKE_HUNG_PIDS
//   fail FUNCTION                        FUNCTION returns an error
//
// The file is read at each call, so a test can change the machine while gpusched runs.
#include <string>
#include <vector>

namespace fake_gpu {

struct Mig {
    std::string uuid;
    unsigned int gpu_instance = 0;
    unsigned int compute_instance = 0;
    unsigned long long total_mib = 0;
    unsigned long long used_mib = 0;
    std::string name;
};

struct Process {
    unsigned int pid = 0;
    unsigned long long used_mib = 0;
};

struct Gpu {
    std::string uuid;
    std::string pci_bus_id;
    unsigned long long total_mib = 0;
    unsigned long long used_mib = 0; // with its processes' memory
    std::string name;
    std::vector<Process> processes;
    int utilization_percent = -1; // -1: not told
    int temperature_celsius = -1;
    bool mig_enabled = false;
    std::vector<Mig> migs;
};

struct Config {
    int driver_version = 13000;
    std::vector<Gpu> gpus; // in the driver's enumeration order
    std::vector<std::string> hung;
    std::vector<std::string> failing;
};

Config read_config();
// The GPUs in PCI bus order, as NVML and CUDA_DEVICE_ORDER=PCI_BUS_ID number them.
std::vector<Gpu> in_pci_order(const Config& config);
// Never returns when `function` is to hang; true when it is to fail.
bool fails(const Config& config, const std::string& function);
// The 16 bytes of "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (or MIG-...).
void uuid_bytes(const std::string& uuid, char (&bytes)[16]);

} // namespace fake_gpu
