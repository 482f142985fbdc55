run "two" {
  command = plan

  variables {
    count_n = 2
  }

  assert {
    condition     = length(terraform_data.many) == 2
    error_message = "count is not 2"
  }

  assert {
    condition     = terraform_data.many[1].input == 1
    error_message = "second instance input"
  }
}
