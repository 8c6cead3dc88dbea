// A recursive function with an out-parameter (`&acc`: a local cell the AD must keep for
// the reverse of the call that wrote it).
double __enzyme_autodiff(void *, ...);

static void step(double *acc, double v) { *acc = *acc * 0.5 + v * v; }

double walk(const double *x, int n) {
  if (n == 0)
    return 0.0;
  double acc = walk(x, n - 1);
  step(&acc, x[n - 1]);
  return acc * x[0];
}

int main(void) {
  double x[4] = {0.5, -1.0, 2.0, 0.25}, dx[4] = {0};
  __enzyme_autodiff((void *)walk, x, dx, 4);
  return 0;
}
