run "wrong" {
  command = plan

  assert {
    condition     = terraform_data.d.input == "goodbye"
    error_message = "The input is ${terraform_data.d.input}."
  }
}
