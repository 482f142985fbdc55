run "three" {
  variables {
    count_n = 3
  }

  assert {
    condition     = output.count == 3
    error_message = "count is not 3"
  }
}
