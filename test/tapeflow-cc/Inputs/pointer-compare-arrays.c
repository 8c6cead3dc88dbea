double f(double *x, double *end) { double s = 0.0; for (double *p = x; p < end; p++) s += *p; return s; }
