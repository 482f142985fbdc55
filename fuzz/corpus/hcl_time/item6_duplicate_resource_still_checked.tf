resource "terraform_data" "a" {}
resource "terraform_data" "a" {
  lifecycle {
    create_before_destroy = "no"
  }
}
data "terraform_remote_state" "d" {
  backend = "local"
}
data "terraform_remote_state" "d" {
  backend = "local"
}
