extern double scale;
extern double w[3];
double f(double *x);
