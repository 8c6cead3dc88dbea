union U { double d; long l; };
double f(union U *p) { return p->d; }
void g(union U *p, union U *dp) { __enzyme_autodiff((void *)f, p, dp); }
