__attribute__((enzyme_shouldrecompute)) double g(double x) { return x * x; }
double f(double x) { return g(x); }
