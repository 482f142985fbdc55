resource "terraform_data" "a" {
  input = "x"
  lifecycle {
    ignore_changes = ["input"]
  }
}
