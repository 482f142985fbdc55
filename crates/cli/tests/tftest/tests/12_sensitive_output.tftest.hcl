run "secret" {
  assert {
    condition     = output.secret == "s3cret"
    error_message = "secret differs"
  }
}
