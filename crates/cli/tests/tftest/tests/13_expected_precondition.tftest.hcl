run "too_high" {
  command = plan

  variables {
    limit = 200
  }

  expect_failures = [terraform_data.bounded]
}
