run "just_plan" {
  command = plan
}

run "just_apply" {
}
