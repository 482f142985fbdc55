# A mock in the block itself wins over the same type's mock in the files.

mock_provider "random" {}

mock_provider "local" {
  source = "./testing/local"

  mock_data "local_file" {
    defaults = {
      content = "inline"
    }
  }
}

run "r" {
  command = plan

  assert {
    condition     = output.content == "inline"
    error_message = "content is ${output.content}"
  }
}
