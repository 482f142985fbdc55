mock_provider "random" {}

override_resource {
  target = random_id.i
  values = {
    hex = "abcd"
  }
}

override_data {
  target = data.local_file.f
  values = {
    content = "overridden"
  }
}

run "file_level" {
  assert {
    condition     = output.id == "abcd"
    error_message = "id is ${output.id}"
  }

  assert {
    condition     = output.content == "overridden"
    error_message = "content is ${output.content}"
  }
}
