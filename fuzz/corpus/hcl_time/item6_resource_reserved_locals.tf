resource "terraform_data" "a" {
  locals {
    a = 1
  }
}
