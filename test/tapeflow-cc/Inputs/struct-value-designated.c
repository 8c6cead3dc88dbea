struct V { double x, y; };
double f(double a) { struct V v = {.y = a, .x = 1.0}; return v.x * v.y; }
