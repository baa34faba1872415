// The header compiles as C++11 and links: extern "C" names, no C-only constructs.
#include <cstdio>

#include "ossa.h"

int main()
{
    const uint32_t expected = (static_cast<uint32_t>(OSSA_VERSION_MAJOR) << 16) |
                              (static_cast<uint32_t>(OSSA_VERSION_MINOR) << 8) |
                              static_cast<uint32_t>(OSSA_VERSION_PATCH);
    ossa_load_options options;
    ossa_load_options_init(&options);
    const bool ok = ossa_version() == expected && options.size == sizeof options &&
                    ossa_result_name(OSSA_ERR_TRUNCATED) != nullptr;
    std::printf("cpp_header: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
