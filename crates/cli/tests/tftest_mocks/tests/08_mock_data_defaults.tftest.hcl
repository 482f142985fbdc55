mock_provider "random" {}

mock_provider "local" {
  mock_data "local_file" {
    defaults = {
      content = "from mock"
    }
  }
}

run "mock_data" {
  command = plan

  assert {
    condition     = output.content == "from mock"
    error_message = "content is ${output.content}"
  }
}
