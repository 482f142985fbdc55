locals {
  a = [for k in [1] k]
}
