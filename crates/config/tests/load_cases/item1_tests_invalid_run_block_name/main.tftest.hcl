
run "contains spaces" {}
