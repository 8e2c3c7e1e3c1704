// VkFFT through Vulkan on the first adapter: batched C2C (2^27 values) or R2C (2^28 reals), out of
// place as the suite times its peers, verified against a double-precision DFT of the first and last
// rows, timed by timestamps around each append (medians of REPS, three rounds).
// Usage: vkfft-vulkan N [REAL=0] [REPS=60] [PRINT_SHADER=0]; VK_TOTAL=V sets the values a run
// transforms (2^27 complex or 2^28 reals unless set), e.g. smaller on a software adapter.
#include <vulkan/vulkan.h>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <complex>
#include "vkFFT.h"
#include "utils_VkFFT.h"
#include "dft_check.h"

#define CK(x) do { auto r_ = (x); if ((int)r_ != 0) { printf("fail %s = %d at %d\n", #x, (int)r_, __LINE__); exit(1);} } while (0)

int main(int argc, char** argv) {
    uint64_t N = argc > 1 ? strtoull(argv[1], 0, 0) : 8192;
    int real = argc > 2 ? atoi(argv[2]) : 0;
    int reps = argc > 3 ? atoi(argv[3]) : 60;
    int keep = argc > 4 ? atoi(argv[4]) : 0;
    VkGPU g = {};
    g.device_id = 0;
    g.enableValidationLayers = 0;
    CK(createInstance(&g, 0));
    CK(findPhysicalDevice(&g));
    CK(createDevice(&g, 0));
    CK(createFence(&g));
    CK(createCommandPool(&g));
    vkGetPhysicalDeviceProperties(g.physicalDevice, &g.physicalDeviceProperties);
    vkGetPhysicalDeviceMemoryProperties(g.physicalDevice, &g.physicalDeviceMemoryProperties);
    printf("adapter %s driver %u shared %u\n", g.physicalDeviceProperties.deviceName,
           g.physicalDeviceProperties.driverVersion, g.physicalDeviceProperties.limits.maxComputeSharedMemorySize);
    uint64_t total = real ? (1ull << 28) : (1ull << 27);
    if (getenv("VK_TOTAL")) total = strtoull(getenv("VK_TOTAL"), 0, 0);
    uint64_t B = total / N;
    uint64_t inSize = real ? 4 * N * B : 8 * N * B;
    uint64_t outSize = real ? 8 * (N / 2 + 1) * B : inSize;
    VkBuffer inb = {}, outb = {};
    VkDeviceMemory inm = {}, outm = {};
    auto usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    CK(allocateBuffer(&g, &inb, &inm, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, inSize));
    CK(allocateBuffer(&g, &outb, &outm, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, outSize));
    std::vector<float> host(inSize / 4);
    srand(7);
    for (auto& v : host) v = 2.0f * rand() / RAND_MAX - 1.0f;
    CK(transferDataFromCPU(&g, host.data(), &inb, inSize));

    VkFFTConfiguration c = {};
    VkFFTApplication app = {};
    c.FFTdim = 1;
    c.size[0] = N;
    c.numberBatches = B;
    c.device = &g.device;
    c.queue = &g.queue;
    c.fence = &g.fence;
    c.commandPool = &g.commandPool;
    c.physicalDevice = &g.physicalDevice;
    c.keepShaderCode = keep;
    c.isInputFormatted = 1;  // out of place, like torch.fft
    c.inputBuffer = &inb;
    c.inputBufferSize = &inSize;
    c.buffer = &outb;
    c.bufferSize = &outSize;
    if (real) {
        c.performR2C = 1;
        c.inputBufferStride[0] = N;
        c.bufferStride[0] = N / 2 + 1;
    }
    CK(initializeVkFFT(&app, c));

    VkQueryPool pool;
    VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2 * reps;
    CK(vkCreateQueryPool(g.device, &qi, 0, &pool));

    auto submit = [&](int count, bool stamps) {
        VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = g.commandPool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        VkCommandBuffer cb;
        CK(vkAllocateCommandBuffers(g.device, &ai, &cb));
        VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
        CK(vkBeginCommandBuffer(cb, &bi));
        if (stamps) vkCmdResetQueryPool(cb, pool, 0, 2 * reps);
        VkFFTLaunchParams lp = {};
        lp.commandBuffer = &cb;
        VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        for (int i = 0; i < count; i++) {
            vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 1, &mb, 0, 0, 0, 0);
            if (stamps) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, pool, 2 * i);
            CK(VkFFTAppend(&app, -1, &lp));
            if (stamps) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, pool, 2 * i + 1);
        }
        CK(vkEndCommandBuffer(cb));
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        CK(vkQueueSubmit(g.queue, 1, &si, g.fence));
        CK(vkWaitForFences(g.device, 1, &g.fence, VK_TRUE, 100000000000ull));
        CK(vkResetFences(g.device, 1, &g.fence));
        vkFreeCommandBuffers(g.device, g.commandPool, 1, &cb);
    };
    auto median = [&]() {
        std::vector<uint64_t> t(2 * reps);
        CK(vkGetQueryPoolResults(g.device, pool, 0, 2 * reps, 8 * t.size(), t.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        std::vector<double> d;
        for (int i = 0; i < reps; i++) d.push_back((t[2 * i + 1] - t[2 * i]) * g.physicalDeviceProperties.limits.timestampPeriod * 1e-6);
        std::sort(d.begin(), d.end());
        return d[reps / 2];
    };

    // verify: first and last rows against a double DFT
    submit(1, false);
    std::vector<float> out(outSize / 4);
    CK(transferDataToCPU(&g, out.data(), &outb, outSize));
    uint64_t inRow = real ? N : 2 * N, outRow = real ? 2 * (N / 2 + 1) : 2 * N;
    double e0 = rowerr(&host[0], &out[0], N, real);
    double e1 = rowerr(&host[(B - 1) * inRow], &out[(B - 1) * outRow], N, real);
    printf("verify rows 0 and %llu: rel err %.2e %.2e %s\n", (unsigned long long)(B - 1), e0, e1, (e0 < 1e-5 && e1 < 1e-5) ? "ok" : "WRONG");
    if (keep) return 0;

    for (int round = 0; round < 3; round++) {
        submit(std::max(20, reps), false);  // warm-up
        submit(reps, true);
        printf("N %llu real %d batch %llu: vkfft-vulkan %.4f ms\n", (unsigned long long)N, real, (unsigned long long)B, median());
    }
    deleteVkFFT(&app);
    return 0;
}
