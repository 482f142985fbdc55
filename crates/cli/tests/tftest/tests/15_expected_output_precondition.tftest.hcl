run "forty_two" {
  command = plan

  variables {
    limit = 42
  }

  expect_failures = [output.checked]
}
