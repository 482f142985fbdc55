run "plan" {
  command = plan

  assert {
    condition     = terraform_data.d.input == "hello world"
    error_message = "wrong input"
  }
}
