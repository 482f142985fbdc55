mock_provider "random" {}

mock_provider "local" {
  override_data {
    target = data.local_file.f
    values = {
      content = "in mock"
    }
  }
}

run "override_in_mock" {
  command = plan

  assert {
    condition     = output.content == "in mock"
    error_message = "content is ${output.content}"
  }
}
