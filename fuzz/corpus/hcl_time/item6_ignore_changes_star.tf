resource "terraform_data" "a" {
  lifecycle {
    ignore_changes = ["*"]
  }
}
