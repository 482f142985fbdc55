run "t" {}
run "t" {}
