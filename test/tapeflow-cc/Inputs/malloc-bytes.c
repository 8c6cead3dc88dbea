#include <stdlib.h>
double f(void) {
  double *t = malloc(20);
  double s = t[0];
  free(t);
  return s;
}
