terraform {
  state_store "foo_b" {
    provider "foo" {}
  }
}
