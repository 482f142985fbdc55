run "fails" {
  command = plan

  assert {
    condition     = var.name == "nobody"
    error_message = "not nobody"
  }
}

run "passes" {
  command = plan

  assert {
    condition     = var.name == "world"
    error_message = "not world"
  }
}
