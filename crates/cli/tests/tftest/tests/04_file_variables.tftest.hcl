variables {
  name = "file"
}

run "uses_file_variables" {
  command = plan

  assert {
    condition     = local.greeting == "hello file"
    error_message = "file variables not used"
  }
}
