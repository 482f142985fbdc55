run "mixed" {
  command = plan

  assert {
    condition     = var.limit == 10
    error_message = "limit"
  }

  assert {
    condition     = var.count_n == 5
    error_message = "count_n is ${var.count_n}"
  }
}
