resource "random_string" "s" {
  length = 12
  special=false
  override_special   =   "!@"

  upper = true
  # a comment breaks the run
  lower=true
  min_numeric = 2
}
