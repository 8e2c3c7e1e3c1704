// The check both programs make: one FFT's output against a double-precision DFT of its input
// (every bin, or about 510 spread over a row of more than 4097 bins), as max error / max value.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

static inline double rowerr(const float* in, const float* out, uint64_t N, int real) {
    // input row: complex (2N floats) or real (N floats); output: N or N/2+1 complex
    uint64_t M = real ? N / 2 + 1 : N;
    std::vector<std::complex<double>> w(N);
    for (uint64_t k = 0; k < N; k++) w[k] = std::polar(1.0, -2 * M_PI * (double)k / (double)N);
    double maxe = 0, maxv = 0;
    uint64_t step = M > 4097 ? M / 509 : 1;  // big rows: every step-th bin and the last
    for (uint64_t k = 0; k < M; k = (k + step < M || k == M - 1) ? k + step : M - 1) {
        std::complex<double> s = 0;
        for (uint64_t n = 0; n < N; n++) {
            std::complex<double> x = real ? std::complex<double>(in[n], 0) : std::complex<double>(in[2 * n], in[2 * n + 1]);
            s += x * w[(n * k) % N];
        }
        std::complex<double> g(out[2 * k], out[2 * k + 1]);
        maxe = std::max(maxe, std::abs(g - s));
        maxv = std::max(maxv, std::abs(s));
    }
    return maxe / maxv;
}
