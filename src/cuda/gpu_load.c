/* gpu_load.c: dlopens the CUDA runtime (gpu_load.h). */
#include "cuda/gpu_load.h"

#include <dlfcn.h>
#include <stdio.h>

static struct shoal_cudart rt;
static int loaded;

#define SYM(field, name)                                                                         \
    do {                                                                                         \
        *(void **)&rt.field = dlsym(lib, name);                                                  \
        if (!rt.field) {                                                                         \
            snprintf(err, errlen, "%s has no %s", path, name);                                   \
            return NULL;                                                                         \
        }                                                                                        \
    } while (0)

const struct shoal_cudart *shoal_cudart_load(char *err, size_t errlen)
{
    if (loaded) return &rt;
    /* The runtime of the major version Shoal was compiled against first
     * (CUDA 11's soname carries a minor version), then any other: the calls
     * used here keep their ABI across majors. */
    char path[64];
    if (CUDART_VERSION / 1000 == 11)
        snprintf(path, sizeof path, "libcudart.so.11.0");
    else
        snprintf(path, sizeof path, "libcudart.so.%d", CUDART_VERSION / 1000);
    const char *others[] = {path, "libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof others / sizeof others[0] && !lib; i++) lib = dlopen(others[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, errlen, "cannot load the CUDA runtime (%s or another major version)", path);
        return NULL;
    }
    SYM(GetDeviceCount, "cudaGetDeviceCount");
    SYM(GetDevice, "cudaGetDevice");
    SYM(Malloc, "cudaMalloc");
    SYM(Free, "cudaFree");
    SYM(Memset, "cudaMemset");
    SYM(IpcGetMemHandle, "cudaIpcGetMemHandle");
    SYM(IpcOpenMemHandle, "cudaIpcOpenMemHandle");
    SYM(IpcCloseMemHandle, "cudaIpcCloseMemHandle");
    SYM(HostAlloc, "cudaHostAlloc");
    SYM(FreeHost, "cudaFreeHost");
    SYM(HostGetDevicePointer, "cudaHostGetDevicePointer");
    SYM(Memcpy, "cudaMemcpy");
    SYM(MemcpyAsync, "cudaMemcpyAsync");
    SYM(StreamCreateWithFlags, "cudaStreamCreateWithFlags");
    SYM(StreamSynchronize, "cudaStreamSynchronize");
    SYM(StreamDestroy, "cudaStreamDestroy");
    SYM(DeviceSynchronize, "cudaDeviceSynchronize");
    SYM(GetErrorString, "cudaGetErrorString");
    loaded = 1;
    return &rt;
}
