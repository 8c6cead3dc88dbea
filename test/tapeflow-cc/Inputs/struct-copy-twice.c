#include <stdlib.h>
typedef struct {
  int lo;
  int hi;
  double *data;
} Frame;

double twice(Frame *p, Frame *q) {
  Frame *b = malloc(sizeof(Frame));
  *b = *p;
  *b = *q;
  double r = b->data[0];
  free(b);
  return r;
}
