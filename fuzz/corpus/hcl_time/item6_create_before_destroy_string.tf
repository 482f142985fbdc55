resource "terraform_data" "a" {
  lifecycle {
    create_before_destroy = "ABSOLUTELY NOT"
  }
}
