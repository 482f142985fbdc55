mock_provider "random" {}
mock_provider "local" {}

run "config_known_in_plan" {
  command = plan

  assert {
    condition     = random_string.s.length == 8
    error_message = "length"
  }

  assert {
    condition     = length(data.local_file.f.content) == 8
    error_message = "data sources are read during plan"
  }
}
