resource "terraform_data" "a" {
  count = 1
  input = "x"
  lifecycle {
    postcondition {
      condition     = self.input != ""
      error_message = "Bad input ${terraform_data.a[0].input}."
    }
  }
}
