override_module {
  target = module.child
  outputs = {
    name = "fake"
  }
}

run "file_level" {
  assert {
    condition     = output.child_name == "fake"
    error_message = "file-level override not applied"
  }
  assert {
    condition     = output.child_id == null
    error_message = "unspecified output is not null"
  }
}

run "run_level" {
  override_module {
    target = module.child
    outputs = {
      name = "other"
      id   = "x1"
    }
  }
  assert {
    condition     = output.child_name == "other" && output.child_id == "x1"
    error_message = "run-level override not applied"
  }
}

run "real_module" {
  command = plan
  assert {
    condition     = output.child_name == "fake"
    error_message = "still overridden in plan"
  }
}
