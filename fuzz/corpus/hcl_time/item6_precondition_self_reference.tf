resource "terraform_data" "a" {
  input = "x"
  lifecycle {
    precondition {
      condition     = terraform_data.a.input != ""
      error_message = "Needs input."
    }
  }
}
