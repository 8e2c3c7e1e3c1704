// VkFFT's CUDA backend, its workgroup (shared) memory as CUDA gives it or capped at SHARED bytes,
// on the same cases as vulkan.cpp, timed by CUDA events around each append.
// Usage: vkfft-cuda N [REAL=0] [REPS=60] [SHARED=0: as CUDA gives it]
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvrtc.h>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <complex>
#include "vkFFT.h"
#include "dft_check.h"

#define CK(x) do { auto r_ = (x); if ((int)r_ != 0) { printf("fail %s = %d at %d\n", #x, (int)r_, __LINE__); exit(1);} } while (0)

int main(int argc, char** argv) {
    uint64_t N = argc > 1 ? strtoull(argv[1], 0, 0) : 8192;
    int real = argc > 2 ? atoi(argv[2]) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 60;
    uint64_t shared = argc > 4 ? strtoull(argv[4], 0, 0) : 0;
    CK(cuInit(0));
    CUdevice dev;
    CK(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    uint64_t total = real ? (1ull << 28) : (1ull << 27);
    uint64_t B = total / N;
    uint64_t inSize = real ? 4 * N * B : 8 * N * B;
    uint64_t outSize = real ? 8 * (N / 2 + 1) * B : inSize;
    void *inb, *outb;
    CK(cudaMalloc(&inb, inSize));
    CK(cudaMalloc(&outb, outSize));
    std::vector<float> host(inSize / 4);
    srand(7);
    for (auto& v : host) v = 2.0f * rand() / RAND_MAX - 1.0f;
    CK(cudaMemcpy(inb, host.data(), inSize, cudaMemcpyHostToDevice));
    VkFFTConfiguration c = {};
    VkFFTApplication app = {};
    c.FFTdim = 1;
    c.size[0] = N;
    c.numberBatches = B;
    c.device = &dev;
    cudaStream_t st = 0;  // the default stream, as the timing events use
    c.stream = &st;
    c.num_streams = 1;
    c.isInputFormatted = 1;
    c.inputBuffer = &inb;
    c.inputBufferSize = &inSize;
    c.buffer = &outb;
    c.bufferSize = &outSize;
    if (shared) c.sharedMemorySize = shared;
    if (real) {
        c.performR2C = 1;
        c.inputBufferStride[0] = N;
        c.bufferStride[0] = N / 2 + 1;
    }
    CK(initializeVkFFT(&app, c));
    VkFFTLaunchParams lp = {};
    CK(VkFFTAppend(&app, -1, &lp));
    CK(cudaDeviceSynchronize());
    std::vector<float> out(outSize / 4);
    CK(cudaMemcpy(out.data(), outb, outSize, cudaMemcpyDeviceToHost));
    uint64_t inRow = real ? N : 2 * N, outRow = real ? 2 * (N / 2 + 1) : 2 * N;
    double e0 = rowerr(&host[0], &out[0], N, real);
    double e1 = rowerr(&host[(B - 1) * inRow], &out[(B - 1) * outRow], N, real);
    printf("verify rows 0 and %llu: rel err %.2e %.2e %s\n", (unsigned long long)(B - 1), e0, e1, (e0 < 1e-5 && e1 < 1e-5) ? "ok" : "WRONG");
    std::vector<cudaEvent_t> ev(2 * reps);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < std::max(20, reps); i++) CK(VkFFTAppend(&app, -1, &lp));
        for (int i = 0; i < reps; i++) {
            CK(cudaEventRecord(ev[2 * i]));
            CK(VkFFTAppend(&app, -1, &lp));
            CK(cudaEventRecord(ev[2 * i + 1]));
        }
        CK(cudaDeviceSynchronize());
        std::vector<double> d;
        for (int i = 0; i < reps; i++) {
            float ms;
            CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            d.push_back(ms);
        }
        std::sort(d.begin(), d.end());
        printf("N %llu real %d batch %llu shared %llu: vkfft-cuda %.4f ms\n", (unsigned long long)N, real, (unsigned long long)B,
               (unsigned long long)app.configuration.sharedMemorySize, d[reps / 2]);
    }
    deleteVkFFT(&app);
    return 0;
}
