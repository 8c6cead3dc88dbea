double f(double x, int k) { switch (k) { case 1 ... 3: x = 2; break; } return x; }
