mock_provider "random" {
  mock_resource "random_string" {
    defaults = {
      result = "mocked"
    }
  }
}

mock_provider "local" {}

run "apply_uses_defaults" {
  assert {
    condition     = output.s == "mocked"
    error_message = "s is ${output.s}"
  }
}

run "plan_keeps_state" {
  command = plan

  assert {
    condition     = output.s == "mocked"
    error_message = "s is ${output.s}"
  }
}
