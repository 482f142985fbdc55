mock_provider "random" {}
mock_provider "local" {}

run "fails" {
  assert {
    condition     = output.s == "never"
    error_message = "s is not never"
  }
}

run "still_runs" {
  command = plan
}
