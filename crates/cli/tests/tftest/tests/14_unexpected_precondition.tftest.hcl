run "too_high" {
  command = plan

  variables {
    limit = 200
  }
}

run "fine" {
  command = plan
}
