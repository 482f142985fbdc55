mock_provider "random" {}
mock_provider "local" {}

override_resource {
  target = module.child.random_pet.p
  values = {
    id = "over"
  }
}

run "module_resource_overridden" {
  assert {
    condition     = output.child == "over"
    error_message = "child is ${output.child}"
  }
}
