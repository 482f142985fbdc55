mock_provider "random" {
  mock_resource "random_pet" {
    defaults = {
      id = "pet"
    }
  }
}

mock_provider "local" {}

run "child_uses_mock" {
  assert {
    condition     = output.child == "pet"
    error_message = "child is ${output.child}"
  }
}
