// bilateral: bilateral-grid slicing (HDRNet's bilateral_slice forward), from gem5-SALAM's
// AD suite (not in their result CSVs). Theirs: sfu-arch/gem5-SALAM,
// benchmarks/AD/bilateral/hw/bilateral.c at commit
// 75c50537a773f5f7f9400fe45c3842edbbdae4ab (`bilateral_slice_cpu_forward_kernel`, handed
// to __enzyme_autodiff with output, grid, guide and input and their shadows, has_offset
// false, total_count = W*H, output_chans 1).
// Per pixel: trilinear weights in x and y of the grid cell around (gx, gy, gz), gz from the
// guide, summed over 2 x 2 x 2 corners per input channel, times the input channel.
// Sizes: H = W = 30, GD = GH = GW = 10, INPUT_CHANS = 10 (their defines), 900 pixels.
// Same loops, arithmetic (gx and gy in float, as their 0.5f and 1.0f make them) and types.
// Differs:
// - their four arrays lie at consecutive addresses of one region (each `size` =
//   W*H*GD*GH*GW*INPUT_CHANS doubles apart) and Enzyme cannot prove them distinct: here they
//   are parts of one array T (output, grid, guide, input), each holding what the loop
//   touches (output and guide W*H, grid GD*GH*GW*INPUT_CHANS, input W*H*INPUT_CHANS);
// - has_offset, total_count and output_chans are the macros HAS_OFFSET (0), TOTAL_COUNT
//   (W*H) and OUTPUT_CHANS (1), their call's constants;
// - their `wz = sqrt(zz + 0.5 - gz)` is never used (NaN for zz < gz - 0.5) and is dropped;
//   C++'s abs(double) is fabs; `static_cast<int>` is a C cast;
// - theirs returns nothing; ours returns loss = sum of the output.
// The guide reaches the output only through floor(): its gradient is zero almost everywhere.
#include <math.h>
#ifndef H
#define H 30
#endif
#ifndef W
#define W 30
#endif
#ifndef GD
#define GD 10
#endif
#ifndef GH
#define GH 10
#endif
#ifndef GW
#define GW 10
#endif
#ifndef INPUT_CHANS
#define INPUT_CHANS 10
#endif
#define HAS_OFFSET 0
#define OUTPUT_CHANS 1
#define TOTAL_COUNT (W * H)
#define O_OUT 0
#define O_GRID (O_OUT + W * H)
#define O_GUIDE (O_GRID + GD * GH * GW * INPUT_CHANS)
#define O_INPUT (O_GUIDE + W * H)
#define T_SIZE (O_INPUT + W * H * INPUT_CHANS)

double bilateral_slice(double T[T_SIZE]) {
  int h = H;
  int w = W;
  int gd = GD;
  int gh = GH;
  int gw = GW;
  int input_chans = INPUT_CHANS;
  int coeff_stride = input_chans;
  int grid_chans = input_chans * OUTPUT_CHANS;
  if (HAS_OFFSET) {
    grid_chans += OUTPUT_CHANS;
    coeff_stride += 1;
  }
  for (int idx = 0; idx < TOTAL_COUNT; ++idx) {
    int x = idx % w;
    int y = (idx / w) % h;
    int out_c = (idx / (h * w)) % OUTPUT_CHANS;
    int b = (idx / (OUTPUT_CHANS * w * h));

    double gx = (x + 0.5f) * gw / (1.0f * w);
    double gy = (y + 0.5f) * gh / (1.0f * h);
    double gz = T[O_GUIDE + x + w * (y + h * b)] * gd;

    int fx = (int)floor(gx - 0.5f);
    int fy = (int)floor(gy - 0.5f);
    int fz = (int)floor(gz - 0.5f);

    int sy = gw;
    int sz = gw * gh;
    int sc = gd * gw * gh;
    int sb = grid_chans * gd * gw * gh;

    double value = 0.0f;
    for (int in_c = 0; in_c < coeff_stride; ++in_c) {
      double coeff_sample = 0.0f;
      for (int xx = fx; xx < fx + 2; ++xx) {
        int x_ = fmax(fmin(xx, gw - 1), 0);
        double wx = fmax(1.0f - fabs(xx + 0.5 - gx), 0.0f);
        for (int yy = fy; yy < fy + 2; ++yy) {
          int y_ = fmax(fmin(yy, gh - 1), 0);
          double wy = fmax(1.0f - fabs(yy + 0.5 - gy), 0.0f);
          for (int zz = fz; zz < fz + 2; ++zz) {
            int z_ = fmax(fmin(zz, gd - 1), 0);
            int c_ = coeff_stride * out_c + in_c;
            int grid_idx = x_ + sy * y_ + sz * z_ + sc * c_ + sb * b;
            coeff_sample += T[O_GRID + grid_idx] * wx * wy;
          }
        }
      }
      if (in_c < input_chans) {
        int input_idx = x + w * (y + h * (in_c + input_chans * b));
        value += coeff_sample * T[O_INPUT + input_idx];
      } else {
        value += coeff_sample;
      }
    }
    T[O_OUT + idx] = value;
  }
  double loss = 0.0;
  for (int idx = 0; idx < TOTAL_COUNT; idx++)
    loss += T[O_OUT + idx];
  return loss;
}

void bilateral_enzyme(double *T, double *dT) {
  __enzyme_autodiff((void *)bilateral_slice, enzyme_dup, T, dT);
}
