// `do { } while` runs its body before the first test: body and test are both in the
// before region of an scf.while whose after region only forwards the values.
// REQUIRES: libclang
// RUN: tapeflow-cc %s | filecheck %s

double f(double x) {
  double y = x;
  int k = 0;
  do {
    y = y * 0.5;
    k++;
  } while (y > 1.0);
  return y + k;
}

// CHECK:      %[[WY:[a-zA-Z0-9_]+]], %[[WK:[a-zA-Z0-9_]+]] = scf.while (%[[Y:[a-zA-Z0-9_]+]] = %x, %[[K:[a-zA-Z0-9_]+]] = %{{.*}}) : (f64, index) -> (f64, index)
// CHECK:        %[[Y2:[a-zA-Z0-9_]+]] = arith.mulf %[[Y]], %{{.*}} : f64
// CHECK:        %[[K2:[a-zA-Z0-9_]+]] = arith.addi %[[K]], %{{.*}} : index
// CHECK:        %[[C:[a-zA-Z0-9_]+]] = arith.cmpf ogt, %[[Y2]], %{{.*}} : f64
// CHECK-NEXT:   scf.condition(%[[C]]) %[[Y2]], %[[K2]] : f64, index
// CHECK-NEXT: } do {
// CHECK-NEXT: ^{{.*}}(%[[A:[a-zA-Z0-9_]+]]: f64 {{.*}}, %[[B:[a-zA-Z0-9_]+]]: index {{.*}}):
// CHECK-NEXT:   scf.yield %[[A]], %[[B]] : f64, index
// CHECK:      arith.index_cast %[[WK]] : index to i64
// CHECK-NEXT: arith.sitofp
