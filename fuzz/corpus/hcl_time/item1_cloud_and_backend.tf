terraform {
  cloud {
    organization = "a"
  }
  backend "local" {}
}
