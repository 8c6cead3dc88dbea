#include <math.h>
double f(double x, double y) { return hypot(x, y); }
