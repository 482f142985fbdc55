run "big_limit" {
  command = plan

  variables {
    limit = 60
  }

  expect_failures = [check.limit_is_small]
}
