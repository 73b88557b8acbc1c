/* gpu_load.h: the CUDA runtime, loaded when the GPU heap is first made.
 * libshoal has no link-time dependency on CUDA: a program that never calls
 * shmemx_gpu_malloc never loads it, and a program built with nvcc (static
 * cudart by default) shares the device's primary context with the copy
 * loaded here, so pointers and IPC mappings are valid in both. */
#ifndef SHOAL_CUDA_GPU_LOAD_H
#define SHOAL_CUDA_GPU_LOAD_H

#include <cuda_runtime_api.h>

struct shoal_cudart {
    __typeof__(&cudaGetDeviceCount) GetDeviceCount;
    __typeof__(&cudaGetDevice) GetDevice;
    __typeof__(&cudaMalloc) Malloc;
    __typeof__(&cudaFree) Free;
    __typeof__(&cudaMemset) Memset;
    __typeof__(&cudaIpcGetMemHandle) IpcGetMemHandle;
    __typeof__(&cudaIpcOpenMemHandle) IpcOpenMemHandle;
    __typeof__(&cudaIpcCloseMemHandle) IpcCloseMemHandle;
    __typeof__(&cudaHostAlloc) HostAlloc;
    __typeof__(&cudaFreeHost) FreeHost;
    __typeof__(&cudaHostGetDevicePointer) HostGetDevicePointer;
    __typeof__(&cudaMemcpy) Memcpy;
    __typeof__(&cudaMemcpyAsync) MemcpyAsync;
    __typeof__(&cudaStreamCreateWithFlags) StreamCreateWithFlags;
    __typeof__(&cudaStreamSynchronize) StreamSynchronize;
    __typeof__(&cudaStreamDestroy) StreamDestroy;
    __typeof__(&cudaDeviceSynchronize) DeviceSynchronize;
    __typeof__(&cudaGetErrorString) GetErrorString;
};

/* The loaded runtime, or NULL (one line in err: which library, why). */
const struct shoal_cudart *shoal_cudart_load(char *err, size_t errlen);

#endif
