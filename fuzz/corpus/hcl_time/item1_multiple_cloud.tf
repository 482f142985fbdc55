terraform {
  cloud {
    organization = "a"
  }
}

terraform {
  cloud {
    organization = "b"
  }
}
