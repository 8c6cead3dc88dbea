#define NOTHING
double f(double *x, int n) {
  double s = 0.0; int i = 0;
  for (NOTHING; i < n; i++) s += x[i];
  return s;
}
