/* SPDX-License-Identifier: BSD-3-Clause */
// A runtime-API program as nvcc builds it, with one kernel of its own: built with -cudart shared
// it links libcudart.so.13 and runs on the runtime stand-in, which accepts the registration of its
// device code, refuses the kernel's launch (cudaErrorNotSupported, one line on stderr) and goes on.
// Prints PASS when every answer is the expected one.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(double *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= 2;
}

int main()
{
    const int n = 64;
    double h[n], back[n];
    double *d = nullptr;
    int failures = 0;

    for (int i = 0; i < n; i++)
        h[i] = i;
    failures += cudaMalloc(&d, sizeof h) != cudaSuccess;
    failures += cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess;
    scale<<<2, 32>>>(d, n);
    failures += cudaGetLastError() != cudaErrorNotSupported;
    // Not sticky: the device goes on, and the kernel changed nothing.
    failures += cudaDeviceSynchronize() != cudaSuccess;
    failures += cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost) != cudaSuccess;
    for (int i = 0; i < n; i++)
        failures += back[i] != h[i];
    failures += cudaFree(d) != cudaSuccess;
    std::printf("%s: %d failures\n", failures == 0 ? "PASS" : "FAIL", failures);
    return failures != 0;
}
