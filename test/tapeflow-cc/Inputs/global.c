extern double counter;
double f(double x) { counter = x; return counter * 2.0; }
