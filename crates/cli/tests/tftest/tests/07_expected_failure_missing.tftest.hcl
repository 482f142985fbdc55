run "long_name" {
  command = plan

  variables {
    name = "long enough"
  }

  expect_failures = [var.name]
}
