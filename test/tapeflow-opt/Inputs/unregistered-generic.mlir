func.func @f() {
  %x = "foo.bar"() : () -> i32
  func.return
}
