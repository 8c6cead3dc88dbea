// ba: bundle-adjustment reprojection error with camera/point index arrays;
// the C twin of ../small/ba.mlir.
#ifndef NC
#define NC 2
#endif
#ifndef NP
#define NP 4
#endif
#ifndef NO
#define NO 6
#endif
#include <math.h>

double ba(double cams[NC][6], double pts[NP][3], double obs[NO][2], const int cam_idx[NO],
          const int pt_idx[NO]) {
  double loss = 0.0;
  for (int o = 0; o < NO; o++) {
    int c = cam_idx[o], p = pt_idx[o];
    double th = cams[c][0], tx = cams[c][1], ty = cams[c][2], tz = cams[c][3];
    double f = cams[c][4], k1 = cams[c][5];
    double X = pts[p][0], Y = pts[p][1], Z = pts[p][2];
    double cs = cos(th), sn = sin(th);
    double xr = cs * X - sn * Y + tx;
    double yr = sn * X + cs * Y + ty;
    double zr = Z + tz;
    double u = xr / zr, v = yr / zr;
    double r2 = u * u + v * v;
    double fd = f * (1.0 + k1 * r2);
    double ru = fd * u - obs[o][0], rv = fd * v - obs[o][1];
    loss += ru * ru + rv * rv;
  }
  return loss;
}

void ba_enzyme(double *cams, double *dcams, double *pts, double *dpts, double *obs,
               double *dobs, int *cam_idx, int *pt_idx) {
  __enzyme_autodiff((void *)ba, enzyme_dup, cams, dcams, enzyme_dup, pts, dpts, enzyme_dup,
                    obs, dobs, enzyme_const, cam_idx, enzyme_const, pt_idx);
}
