
run "same" {}

run "same" {}
