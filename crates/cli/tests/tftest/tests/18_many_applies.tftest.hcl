run "one" {
  variables {
    name = "one"
  }
}

run "two" {
  variables {
    name = "two"
  }
}

run "three" {
  variables {
    name = "three"
  }

  assert {
    condition     = output.greeting == "hello three"
    error_message = "last apply"
  }
}
