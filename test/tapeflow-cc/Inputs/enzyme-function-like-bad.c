double __attribute__((enzyme_function_like("my_alloc"))) g(double x) { return x; }
double f(double x) { return g(x); }
