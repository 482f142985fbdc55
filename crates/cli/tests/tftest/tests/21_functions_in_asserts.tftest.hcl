run "functions" {
  command = plan

  variables {
    name = "Mixed Case"
  }

  assert {
    condition     = upper(var.name) == "MIXED CASE" && length(split(" ", local.greeting)) == 3
    error_message = "functions"
  }
}
