// --version names the package's version and the xDSL it runs on.

// RUN: tapeflow-opt --version | filecheck %s
// CHECK: tapeflow-opt {{[0-9]+\.[0-9]+\.[0-9]+.*}} built on xdsl version {{[0-9]+\.[0-9]+}}
