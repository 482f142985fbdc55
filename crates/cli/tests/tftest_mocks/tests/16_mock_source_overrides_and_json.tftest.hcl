# Override blocks in mock files, and a .tfmock.json file.

mock_provider "random" {
  source = "./testing/over"
}

mock_provider "local" {
  source = "./testing/over"
}

run "r" {
  assert {
    condition     = output.content == "overridden"
    error_message = "content is ${output.content}"
  }

  assert {
    condition     = output.s == "from json"
    error_message = "s is ${output.s}"
  }
}
