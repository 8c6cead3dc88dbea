double dot(const double *x, int n) { double s = 0.0; for (int i = 0; i < n; i++) s += x[i]; return s; }
double f(double *a, int n) { return dot(a + n, n); }
