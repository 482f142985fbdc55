data "terraform_remote_state" "a" {
  backend = "local"
  locals {
    a = 1
  }
}
