provider "aws" {
  lifecycle {
    prevent_destroy = true
  }
  locals {
    a = 1
  }
}
