mock_provider "local" {}

run "run_level" {
  override_resource {
    target = random_string.s
    values = {
      result = "fixed"
    }
  }

  override_data {
    target = data.local_file.f
    values = {
      content = "run data"
    }
  }

  assert {
    condition     = output.s == "fixed" && output.content == "run data"
    error_message = "s is ${output.s}, content is ${output.content}"
  }
}

run "data_read_again_without_override" {
  assert {
    condition     = output.content != "run data"
    error_message = "content is ${output.content}"
  }
}
