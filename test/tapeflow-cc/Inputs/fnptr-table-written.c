static double sq(double a) { return a * a; }
static double neg(double a) { return -a; }
double f(double x, int k) {
  double (*ops[2])(double) = {sq, neg};
  ops[0] = neg; return ops[k](x);
}
