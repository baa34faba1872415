/* One translation unit that includes ossa.h, compiled by c_tests/header_std.sh as C89, C99, C11,
 * C++11 and C++17 with every warning an error: the header must not need a newer dialect than the
 * caller's. So this file itself is C89 and C++ at once. */
#include <stdio.h>

#include "ossa.h"

int main(void)
{
    ossa_load_options options;
    ossa_mat3x4 identity = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}};
    ossa_frame_blend blend = {0, 1.0f};
    uint32_t result = OSSA_ERR_TRUNCATED;
    uint32_t format = OSSA_FORMAT_GLTF;
    const uint32_t expected = ((uint32_t)OSSA_VERSION_MAJOR << 16) | ((uint32_t)OSSA_VERSION_MINOR << 8) |
                              (uint32_t)OSSA_VERSION_PATCH;
    int ok;

    ossa_load_options_init(&options);
    ok = ossa_version() == expected && options.size == sizeof options && identity.m[10] == 1.0f &&
         blend.weight == 1.0f && result == 4 && format == 13 &&
         ossa_model_find_bone(NULL, "head") == -1;
    printf("%s\n", ossa_result_name(result));
    return ok ? 0 : 1;
}
