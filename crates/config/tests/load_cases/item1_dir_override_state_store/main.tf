terraform {
  state_store "foo_a" {
    provider "foo" {}
  }
}
