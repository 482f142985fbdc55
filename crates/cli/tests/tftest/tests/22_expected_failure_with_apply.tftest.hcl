run "bad_name" {
  variables {
    name = "no"
  }

  expect_failures = [var.name]
}
