double f(double *a[4]) { return a[0][0]; }
