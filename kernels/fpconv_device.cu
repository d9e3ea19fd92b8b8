/* fpconv_device.cu: compiles the shared per-element conversion (src/fpconv.h) as CUDA device code. */
/* The GPU kernels of apsmpi (amax, encode, decode) are built on these device functions; this
 * translation unit makes `make` fail when fpconv.h stops being valid device code. */
#include "fpconv.h"

__global__ void apsmpi_fpconv_roundtrip(const float *in, float *out, unsigned n, apsmpi_format f, int scale,
                                        unsigned long long seed)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        uint32_t rnd = apsmpi_rng_bits(apsmpi_rng_key(seed, 0), i);
        out[i] = apsmpi_decode_one(apsmpi_encode_one(apsmpi_f2u(in[i]), scale, &f, seed != 0, rnd), scale, &f);
    }
}
