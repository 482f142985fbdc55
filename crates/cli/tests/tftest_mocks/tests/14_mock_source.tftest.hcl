# A mock provider whose mocks come from a directory of .tfmock.hcl files
# (relative to the working directory).

mock_provider "random" {}

mock_provider "local" {
  source = "./testing/local"
}

run "r" {
  command = plan

  assert {
    condition     = output.content == "from file"
    error_message = "content is ${output.content}"
  }
}
