#include <stdlib.h>
typedef float *Row;
float first(Row *frame) {
  Row *copy = malloc(sizeof(Row));
  *copy = *frame;
  float r = (*copy)[0];
  free(copy);
  return r;
}
