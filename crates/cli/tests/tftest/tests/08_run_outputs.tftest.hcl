run "first" {
}

run "second" {
  command = plan

  assert {
    condition     = run.first.greeting == "hello world"
    error_message = "run output not visible"
  }
}
