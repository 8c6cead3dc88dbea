#include <math.h>
double f(double x, double y) { return nextafter(x, y); }
