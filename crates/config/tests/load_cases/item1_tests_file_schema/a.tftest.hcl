test {
  parallel = true
}
variables {
  x = 1
}
variables {
  x = 2
}
foo = 1
bogus "x" {}
run "ok" {
  command = "plan"
  state_key = "a"
  parallel = true
  skip_cleanup = true
  zzz = 1
  nope {}
}
run "ok" {}
run "1bad" {}
run {}
