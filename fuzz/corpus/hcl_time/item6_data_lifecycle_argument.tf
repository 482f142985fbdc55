data "terraform_remote_state" "a" {
  backend = "local"
  lifecycle {
    create_before_destroy = true
  }
}
