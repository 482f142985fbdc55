run "apply" {
  assert {
    condition     = output.greeting == "hello world"
    error_message = "wrong greeting"
  }
}
