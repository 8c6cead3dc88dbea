#define M 3
double g(double a[][M]) { return a[0][1]; }
double f(double x[4][M]) { return g(x) + g(x + 1); }
