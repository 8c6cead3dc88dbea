struct V { double v[2]; };
double f(struct V a, int i) { double s = a.v[0]; return s + a.v[i]; }
