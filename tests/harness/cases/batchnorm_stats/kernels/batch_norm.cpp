#include <cmath>
#include <cstdint>

// x, out: [batch, channels, plane] float32. Per channel: mean and biased variance over batch and plane (in
// double, as a two-pass sum), then out = (x - mean) / sqrt(var + eps) * weight + bias.
extern "C" void batch_norm_train(const float* x, const float* weight, const float* bias, float* out,
                                 int64_t batch, int64_t channels, int64_t plane, double eps) {
#pragma omp parallel for
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      const float* xp = x + (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) sum += xp[i];
    }
    const double count = double(batch * plane);
    const double mean = sum / count;
    double squares = 0.0;
    for (int64_t n = 0; n < batch; ++n) {
      const float* xp = x + (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) {
        const double d = xp[i] - mean;
        squares += d * d;
      }
    }
    const double scale = weight[c] / std::sqrt(squares / count + eps);
    const double shift = bias[c] - mean * scale;
    for (int64_t n = 0; n < batch; ++n) {
      const float* xp = x + (n * channels + c) * plane;
      float* op = out + (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) op[i] = float(xp[i] * scale + shift);
    }
  }
}
