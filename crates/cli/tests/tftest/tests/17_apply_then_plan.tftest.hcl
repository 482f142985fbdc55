run "create" {
}

run "change" {
  command = plan

  variables {
    name = "again"
  }

  assert {
    condition     = terraform_data.d.input == "hello again"
    error_message = "planned input"
  }
}
