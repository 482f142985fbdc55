run "big_limit" {
  command = plan

  variables {
    limit = 60
  }

  assert {
    condition     = var.limit == 60
    error_message = "limit"
  }
}
