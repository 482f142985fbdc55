terraform {
  required_providers {
    a = { source = "example/a" }
  }
  required_providers {
    b = { source = "example/b" }
  }
}
