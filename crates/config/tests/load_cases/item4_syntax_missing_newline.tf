locals {
  a = "x" b
}
