/* gpu_probe.cu: exit status 0 when a CUDA device is usable, 1 otherwise
 * (no driver, no device), silently. */
#include <cuda_runtime.h>

int main(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0 ? 0 : 1;
}
