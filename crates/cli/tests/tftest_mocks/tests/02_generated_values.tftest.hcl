mock_provider "random" {}
mock_provider "local" {}

run "generated" {
  assert {
    condition     = length(output.id) == 8 && can(regex("^[a-z0-9]+$", output.id))
    error_message = "id is ${output.id}"
  }

  assert {
    condition     = random_id.i.dec == "0" || random_id.i.dec != ""
    error_message = "dec is ${random_id.i.dec}"
  }

  assert {
    condition     = length(data.local_file.f.content) == 8
    error_message = "content is ${data.local_file.f.content}"
  }
}
