double g(double x, int n);
double f(double x, int n) { return n > 0 ? g(x, n - 1) * x : 1.0; }
double g(double x, int n) { return f(x, n); }
