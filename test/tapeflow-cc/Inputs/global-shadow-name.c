double w[2];
double w_shadow[2];
double f(double *x) { w[0] = x[0]*x[0]; w_shadow[1] = 1; return w[0]; }
