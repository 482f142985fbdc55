variables {
  name = "file"
}

run "run_wins" {
  command = plan

  variables {
    name = "run"
  }

  assert {
    condition     = terraform_data.d.input == "hello run"
    error_message = "run variables do not win"
  }
}

run "file_again" {
  command = plan

  assert {
    condition     = var.name == "file"
    error_message = "file variable lost"
  }
}
