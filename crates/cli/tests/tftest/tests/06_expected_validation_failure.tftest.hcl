run "short_name" {
  command = plan

  variables {
    name = "x"
  }

  expect_failures = [var.name]
}
