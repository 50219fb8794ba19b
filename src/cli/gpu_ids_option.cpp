#include "gpu_ids_option.hpp"

#include "option_values.hpp"

namespace gpusched::cli {

CLI::Option* add_gpu_ids_option(CLI::App& app, std::vector<std::string>& gpus,
                                const std::string& description)
{
    return app.add_option("-g,--gpus", gpus, description)
        ->type_name("ID")
        ->expected(1, -1)
        ->envname("GPUSCHED_GPUS");
}

std::string_view gpu_ids_source(const std::vector<std::string>& gpus)
{
    const auto variable = environment_variable("GPUSCHED_GPUS");
    return variable && gpus == std::vector<std::string>{*variable} ? "GPUSCHED_GPUS" : "--gpus";
}

} // namespace gpusched::cli
