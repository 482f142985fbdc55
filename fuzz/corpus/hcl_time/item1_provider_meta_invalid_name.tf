terraform {
  provider_meta "chunky_bacon" {
    hello = "world"
  }
  provider_meta "TEST" {}
}
