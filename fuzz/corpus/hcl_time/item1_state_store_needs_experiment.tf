terraform {
  state_store "foo_x" {
    provider "foo" {}
  }
}
