run "first" {
}

run "second" {
  variables {
    name = run.first.greeting
  }

  assert {
    condition     = output.greeting == "hello hello world"
    error_message = "got ${output.greeting}"
  }
}
