mock_provider "random" {}
mock_provider "local" {}

run "computed_unknown_in_plan" {
  command = plan

  assert {
    condition     = output.s == "x"
    error_message = "s is ${output.s}"
  }
}

run "skipped_after_error" {
  command = plan
}
