mock_provider "random" {}
mock_provider "local" {}

run "override_during_plan" {
  command = plan

  override_resource {
    target          = random_string.s
    override_during = plan
    values = {
      result = "early"
    }
  }

  assert {
    condition     = output.s == "early"
    error_message = "s is ${output.s}"
  }
}
