mock_provider "random" {
  alias = "unused"
}

override_data {
  target = data.local_file.f
  values = {
    content = "x"
  }
}

run "real_random" {
  variables {
    len = 3
  }

  assert {
    condition     = length(output.s) == 3
    error_message = "s is ${output.s}"
  }
}
