terraform {
  required_providers {
    foo = {
      source = "example/terraform-foo"
    }
  }
}
